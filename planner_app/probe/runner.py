"""Run the probe worker in a subprocess with a timeout and cancel; a crash or hang of the
worker never affects the caller. Used by the CLI and, through ui/workers.py, the app.

Isolation: the worker runs in its own session (process group) and carries a run token in
its environment (``procs.RUN_ENV``); on timeout, cancel, a malformed message and at the end
of every run the group and every process with the token are killed (descendants that left
the group with ``setsid`` included). The worker kills itself and its run when the parent
dies (``procs.guard_worker``); the parent also kills live runs at interpreter exit. Output
is read by threads from raw pipes, never past the deadline: a descendant that keeps stdout
open cannot hold the caller. Every JSON message is checked against its schema
(``messages.py``)."""
from __future__ import annotations

import atexit
import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid

from planner_app.probe import procs
from planner_app.probe.messages import MessageError, check_message

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXIT_GRACE_S = 1.0  # after the worker exits, how long its stdout may stay open (a descendant holding it)
MAX_LINE_BYTES = 64 << 20  # one message; a result of every benchmark is ~100 kB
_LIVE: set = set()  # runners with a worker running: killed at interpreter exit


class ProbeError(RuntimeError):
    """The worker failed, crashed, hung or was cancelled; ``str()`` is one plain line."""


class ProbeCancelled(ProbeError):
    pass


def worker_command(task: str, args: dict, python: str | None = None) -> list[str]:
    return [python or sys.executable, "-u", "-m", "planner_app.probe.worker", task, json.dumps(args)]


@atexit.register
def _kill_live_runs() -> None:
    for runner in list(_LIVE):
        runner._kill()


def _pump(fd: int, name: str, out: queue.Queue) -> None:
    """Raw chunks of ``fd`` into ``out`` as (name, bytes), then (name, None); closes ``fd``."""
    try:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out.put((name, chunk))
    finally:
        out.put((name, None))
        try:
            os.close(fd)
        except OSError:
            pass


def _exited(proc) -> bool:
    """Whether the worker has exited, without reaping it on POSIX: while the zombie is
    unreaped its pid (= the process group's id) cannot be reused, so killing the group
    afterwards cannot hit another process."""
    if os.name != "posix":
        return proc.poll() is not None
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


class ProbeRunner:
    """One worker run at a time. ``command`` overrides the worker (tests inject bad ones)."""

    def __init__(self, python: str | None = None, timeout_s: float = 600.0, command: list[str] | None = None):
        self.python = python
        self.timeout_s = timeout_s
        self.command = command
        self._proc = None
        self._token = None
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()
        self._kill()

    def _kill(self) -> None:
        p = self._proc
        if p is None or p.returncode is not None:
            return  # reaped: its pid may belong to another process now
        procs.kill_run(p.pid if os.name == "posix" else None, self._token)
        if os.name != "posix":
            try:
                p.kill()
            except OSError:
                pass

    def _start(self, cmd: list[str]):
        env = dict(os.environ)
        env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._token = uuid.uuid4().hex
        env[procs.RUN_ENV] = self._token
        env["PLANNER_PROBE_PARENT"] = str(os.getpid())
        r_out, w_out = os.pipe()
        r_err, w_err = os.pipe()
        try:
            # stdin stays a pipe from us: the worker reads end-of-file when this process is gone
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=w_out, stderr=w_err, env=env,
                                    start_new_session=(os.name == "posix"))
        except OSError as e:
            for fd in (r_out, r_err):
                os.close(fd)
            raise ProbeError(f"cannot start the probe worker ({cmd[0]}): {e.strerror or e}") from None
        finally:
            os.close(w_out)
            os.close(w_err)
        return proc, r_out, r_err

    def run(self, task: str, args: dict | None = None, progress=None) -> dict:
        """Run ``task`` to its result; raises ProbeError on crash, hang (timeout), a malformed
        message or cancel."""
        cmd = self.command or worker_command(task, args or {}, self.python)
        self._cancel.clear()
        proc, r_out, r_err = self._start(cmd)
        self._proc = proc
        _LIVE.add(self)
        chunks: queue.Queue = queue.Queue()
        for fd, name in ((r_out, "out"), (r_err, "err")):
            threading.Thread(target=_pump, args=(fd, name, chunks), daemon=True, name=f"probe-{name}").start()
        deadline = time.monotonic() + self.timeout_s
        buf = b""
        err_tail = b""
        out_open = True
        exited_at = None
        result = error = None
        try:
            while True:
                if self._cancel.is_set():
                    raise ProbeCancelled("the probe was cancelled")
                now = time.monotonic()
                if now >= deadline:
                    raise ProbeError(f"the probe worker did not finish within {self.timeout_s:g} s and was stopped")
                if exited_at is None and _exited(proc):
                    exited_at = now
                if exited_at is not None and (not out_open or now - exited_at > EXIT_GRACE_S):
                    break  # a descendant holding stdout open does not keep us here
                try:
                    name, chunk = chunks.get(timeout=min(0.05, max(deadline - now, 0.001)))
                except queue.Empty:
                    continue
                if name == "err":
                    if chunk:
                        err_tail = (err_tail + chunk)[-8192:]
                    continue
                if chunk is None:
                    out_open = False
                    chunk = b"\n"  # a last line without its newline
                buf += chunk
                if len(buf) > MAX_LINE_BYTES:
                    raise ProbeError(f"the probe worker sent a line longer than {MAX_LINE_BYTES >> 20} MiB")
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    kind, payload = self._message(task, line)
                    if kind == "progress" and progress is not None:
                        progress(*payload)
                    elif kind == "result":
                        result = payload
                    elif kind == "error":
                        error = payload
        finally:
            self._kill()  # the group and the run: whatever the worker left behind goes too
            try:
                proc.wait(timeout=10)  # reap it: no zombie, no "still running" warning
            except subprocess.TimeoutExpired:
                pass
            try:
                proc.stdin.close()
            except OSError:
                pass
            _LIVE.discard(self)
            self._proc = None
        rc = proc.returncode
        if self._cancel.is_set():
            raise ProbeCancelled("the probe was cancelled")
        if result is not None and rc == 0:
            return result
        if error:
            raise ProbeError(f"the probe failed: {error}")
        tail = err_tail.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        if rc is None:
            raise ProbeError("the probe worker did not exit and was stopped")
        how = f"signal {-rc}" if rc < 0 else f"exit code {rc}"
        if rc == 0:
            raise ProbeError("the probe worker exited without a result")
        raise ProbeError(f"the probe worker crashed ({how}){': ' + tail[0][:200] if tail[0] else ''}")

    @staticmethod
    def _message(task: str, line: bytes):
        """(kind, payload) of one stdout line; (None, None) for text that is no message
        (libraries print to stdout too). A malformed message is a ProbeError."""
        text = line.decode("utf-8", "replace").strip()
        if not text.startswith("{"):
            return None, None
        try:
            msg = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return None, None
        if not isinstance(msg, dict) or "type" not in msg:
            return None, None
        try:
            return check_message(task, msg)
        except MessageError as e:
            raise ProbeError(f"the probe worker sent a malformed {e.kind} message: {e}") from None
