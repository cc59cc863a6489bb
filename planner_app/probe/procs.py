"""Process-tree control for the probe worker (standard library only: the worker imports it
from whatever Python runs the benchmarks).

A run is marked by an environment variable (``RUN_ENV``) that every process it starts
inherits, so the whole run can be found and killed even where a descendant left the
worker's process group (``setsid``) or was re-parented when the worker died. The worker
also watches its parent: Linux's parent-death signal (``prctl(PR_SET_PDEATHSIG)``) and a
pipe on its stdin that reads end-of-file when the parent is gone, whatever killed it."""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading

RUN_ENV = "PLANNER_PROBE_RUN"  # the run's token, inherited by every descendant
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
KILL_ROUNDS = 5  # scans after SIGKILL: a process that forked before it was killed is found next round


def set_parent_death_signal(sig: int = signal.SIGTERM) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent thread exits (prctl(2),
    PR_SET_PDEATHSIG). False where that does not exist."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def run_members(token: str) -> list[int]:
    """Live processes (not this one) whose environment carries ``RUN_ENV=token`` (Linux's
    /proc; elsewhere none are found and the process group is what gets killed)."""
    if not token or not os.path.isdir("/proc"):
        return []
    want = f"{RUN_ENV}={token}".encode()
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:  # gone, or not ours
            continue
        if want in env.split(b"\0"):
            found.append(int(name))
    return found


def kill_run(pgid: int | None, token: str | None) -> None:
    """SIGKILL the process group ``pgid`` and every process marked with ``token``."""
    if pgid and os.name == "posix":
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    for _ in range(KILL_ROUNDS):
        pids = run_members(token)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                pass


def _end_run(*_args) -> None:
    """This worker's parent is gone: kill the whole run, this process last (its own group
    with it, where it leads one)."""
    kill_run(None, os.environ.get(RUN_ENV))
    if os.name == "posix" and os.getpgrp() == os.getpid():
        kill_run(os.getpid(), None)
    os._exit(1)


def guard_worker() -> None:
    """Called first in a worker: when the parent dies (SIGKILL included) the worker, its
    process group and every process of the run are killed. Three ways in, for the ways a
    parent can go: the parent-death signal (Linux), end-of-file on stdin (the parent holds
    the pipe's other end; any OS), and a parent that was already gone before this ran."""
    if os.environ.get(RUN_ENV) is None:
        return  # started by hand, not by the runner
    if set_parent_death_signal(signal.SIGTERM):
        signal.signal(signal.SIGTERM, _end_run)
    parent = os.environ.get("PLANNER_PROBE_PARENT")
    if parent and parent.isdigit() and os.getppid() != int(parent):
        _end_run()  # the parent died before the signal was armed

    def watch_stdin():
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        _end_run()

    threading.Thread(target=watch_stdin, name="parent-watch", daemon=True).start()
