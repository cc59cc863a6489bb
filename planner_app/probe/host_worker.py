"""The host probe's worker: ``python -m planner_app.probe.host_worker 'JSON-ARGS'``.

The same JSON-lines protocol as probe/worker.py (progress, result, error), so probe/runner.py's
ProbeRunner runs it (``ProbeRunner(command=host_command(args)).run("host")``): its own process,
a timeout, killed with its process group on cancel. A folder problem is one plain line.
"""
from __future__ import annotations

import json
import sys
import traceback

from planner_app.probe.worker import _progress, emit


def host_command(args: dict, python: str | None = None) -> list[str]:
    """The command line that runs the host probe with ``args`` (folder, size_bytes, images)."""
    return [python or sys.executable, "-u", "-m", "planner_app.probe.host_worker", json.dumps(args)]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = json.loads(argv[0]) if argv else {}
    from planner_app.probe.host import HostProbeError, run_host_probe

    try:
        result = run_host_probe(args, _progress)
    except HostProbeError as e:
        emit({"type": "error", "message": str(e)})
        return 1
    except Exception as e:  # noqa: BLE001 - reported to the parent as one clear line
        emit({"type": "error", "message": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-2000:]})
        return 1
    emit({"type": "result", "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
