"""The probe worker: ``python -m planner_app.probe.worker TASK 'JSON-ARGS'``.

Runs in its own process (a CUDA fault poisons a process, a hung kernel can only be killed
with it, GPU memory is released on exit, and the user's own ML interpreter can run it).
Speaks JSON lines on stdout: ``{"type": "progress", "fraction", "text"}``,
``{"type": "result", "result": {...}}`` or ``{"type": "error", "message"}``.
"""
from __future__ import annotations

import json
import sys
import traceback
from dataclasses import asdict

from planner_app.probe import nvml
from planner_app.probe.bench import run_benchmarks
from planner_app.probe.procs import guard_worker
from planner_app.probe.validate import run_validation


def emit(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _progress(fraction, text):
    emit({"type": "progress", "fraction": round(float(fraction), 4), "text": text})


def parse_args(text: str | None):
    """The task's JSON arguments as a dict, or None when they are not a JSON object."""
    try:
        args = json.loads(text) if text else {}
    except (json.JSONDecodeError, RecursionError):
        return None
    return args if isinstance(args, dict) else None


def report(run, expected: tuple = ()) -> int:
    """Run ``run()`` and speak its outcome: the result, or one error line (``expected`` errors as
    their message alone, anything else with its type and the traceback's tail). Exit status 0 or 1."""
    try:
        result = run()
    except expected as e:
        emit({"type": "error", "message": str(e)})
        return 1
    except Exception as e:  # noqa: BLE001 - reported to the parent as one clear line
        emit({"type": "error", "message": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-2000:]})
        return 1
    emit({"type": "result", "result": result})
    return 0


def _bench(args):
    return run_benchmarks(args.get("backend", "auto"), bool(args.get("quick")), _progress,
                          model_shapes=args.get("model_shapes"))


def _validate(args):
    return run_validation(args, _progress)


def _inventory(args):
    st, gpus = nvml.inventory()
    return {"nvml": asdict(st), "gpus": [g.to_dict() for g in gpus]}


TASKS = {"bench": _bench, "validate": _validate, "inventory": _inventory}


def main(argv=None) -> int:
    guard_worker()  # dies with its whole run when the parent goes (the runner started it)
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        emit({"type": "error", "message": "usage: worker TASK [JSON-ARGS]"})
        return 2
    task = argv[0]
    args = parse_args(argv[1] if len(argv) > 1 else None)
    if args is None:
        emit({"type": "error", "message": "the task's arguments must be a JSON object"})
        return 2
    if task not in TASKS:
        emit({"type": "error", "message": f"unknown task {task!r}"})
        return 2
    return report(lambda: TASKS[task](args))


if __name__ == "__main__":
    sys.exit(main())
