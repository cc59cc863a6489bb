"""The host probe's worker: ``python -m planner_app.probe.host_worker 'JSON-ARGS'``.

The same JSON-lines protocol as probe/worker.py (progress, result, error), so probe/runner.py's
ProbeRunner runs it (``ProbeRunner(command=host_command(args)).run("host")``): its own process,
a timeout, killed with its process group on cancel. A folder problem is one plain line.
"""
from __future__ import annotations

import json
import sys

from planner_app.probe.host import HostProbeError, run_host_probe
from planner_app.probe.procs import guard_worker
from planner_app.probe.worker import _progress, emit, parse_args, report


def host_command(args: dict, python: str | None = None) -> list[str]:
    """The command line that runs the host probe with ``args`` (folder, size_bytes, images)."""
    return [python or sys.executable, "-u", "-m", "planner_app.probe.host_worker", json.dumps(args)]


def main(argv=None) -> int:
    guard_worker()  # dies with its whole run when the parent goes (the runner started it)
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv[0] if argv else None)
    if args is None:
        emit({"type": "error", "message": "the host probe's arguments must be a JSON object"})
        return 2
    return report(lambda: run_host_probe(args, _progress), expected=(HostProbeError,))


if __name__ == "__main__":
    sys.exit(main())
