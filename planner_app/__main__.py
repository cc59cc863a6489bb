"""``python -m planner_app`` is the ``gpu-planner`` command."""
import sys

from planner_app.cli import main

sys.exit(main())
