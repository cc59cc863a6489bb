"""Entry script of the frozen bundle: the same ``gpu-planner`` command as the wheel's
console script (``planner_app.cli:main``)."""
import sys

from planner_app.cli import main

if __name__ == "__main__":
    sys.exit(main())
