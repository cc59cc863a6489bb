"""Entry script of the frozen bundle: the same ``gpu-planner`` command as the wheel's
console script (``planner_app.cli:main``).

In the bundle ``sys.executable`` is this program, not a Python interpreter. The probe
starts its worker as ``[sys.executable, "-u", "-m", "planner_app.probe.worker", ...]``
(planner_app/probe/runner.py), so that form is accepted here for the app's own modules:
the worker then runs in its own process, as it does from a checkout or a wheel.
"""
import sys

_PYTHON_FLAGS = {"-u", "-B", "-E", "-s", "-I"}


def _run_app_module(argv) -> bool:
    args = list(argv[1:])
    unbuffered = False
    while args and args[0] in _PYTHON_FLAGS:
        unbuffered = unbuffered or args[0] == "-u"
        args.pop(0)
    if len(args) < 2 or args[0] != "-m" or not args[1].startswith("planner_app."):
        return False
    import runpy

    if unbuffered:
        sys.stdout.reconfigure(line_buffering=True, write_through=True)
        sys.stderr.reconfigure(line_buffering=True, write_through=True)
    sys.argv = [args[1]] + args[2:]
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    return True


if __name__ == "__main__":
    if _run_app_module(sys.argv):
        sys.exit(0)
    from planner_app.cli import main

    sys.exit(main())
