"""Run the probe worker in a subprocess with a timeout and cancel; a crash or hang of the
worker never affects the caller. Used by the CLI and, through ui/workers.py, the app."""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ProbeError(RuntimeError):
    """The worker failed, crashed, hung or was cancelled; ``str()`` is one plain line."""


class ProbeCancelled(ProbeError):
    pass


def worker_command(task: str, args: dict, python: str | None = None) -> list[str]:
    return [python or sys.executable, "-u", "-m", "planner_app.probe.worker", task, json.dumps(args)]


class ProbeRunner:
    """One worker run at a time. ``command`` overrides the worker (tests inject bad ones)."""

    def __init__(self, python: str | None = None, timeout_s: float = 600.0, command: list[str] | None = None):
        self.python = python
        self.timeout_s = timeout_s
        self.command = command
        self._proc = None
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()
        self._kill()

    def _kill(self) -> None:
        p = self._proc
        if p is None or p.poll() is not None:
            return
        try:
            if os.name == "posix":
                os.killpg(p.pid, signal.SIGKILL)
            else:
                p.kill()
        except (ProcessLookupError, PermissionError, OSError):
            try:
                p.kill()
            except OSError:
                pass

    def run(self, task: str, args: dict | None = None, progress=None) -> dict:
        """Run ``task`` to its result; raises ProbeError on crash, hang (timeout) or cancel."""
        cmd = self.command or worker_command(task, args or {}, self.python)
        env = dict(os.environ)
        env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._cancel.clear()
        try:
            self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                          start_new_session=(os.name == "posix"))
        except OSError as e:
            raise ProbeError(f"cannot start the probe worker ({cmd[0]}): {e.strerror or e}") from None
        lines: queue.Queue = queue.Queue()
        err_tail: list[str] = []

        def pump_out(stream):
            for line in stream:
                lines.put(line)
            lines.put(None)  # end of output

        def pump_err(stream):
            for line in stream:
                err_tail.append(line)
                del err_tail[:-50]

        t_out = threading.Thread(target=pump_out, args=(self._proc.stdout,), daemon=True)
        t_err = threading.Thread(target=pump_err, args=(self._proc.stderr,), daemon=True)
        t_out.start()
        t_err.start()
        deadline = time.monotonic() + self.timeout_s
        result = error = None
        try:
            while True:
                if self._cancel.is_set():
                    self._kill()
                    raise ProbeCancelled("the probe was cancelled")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._kill()
                    raise ProbeError(f"the probe worker did not finish within {self.timeout_s:g} s and was stopped")
                try:
                    line = lines.get(timeout=min(0.1, remaining))
                except queue.Empty:
                    continue
                if line is None:
                    break
                try:
                    msg = json.loads(line)
                except json.JSONDecodeError:
                    continue  # libraries print to stdout too; only JSON lines are messages
                kind = msg.get("type") if isinstance(msg, dict) else None
                if kind == "progress" and progress is not None:
                    progress(float(msg.get("fraction", 0.0)), str(msg.get("text", "")))
                elif kind == "result":
                    result = msg.get("result")
                elif kind == "error":
                    error = str(msg.get("message", "unknown error"))
            rc = self._proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self._kill()
            raise ProbeError(f"the probe worker did not exit within {self.timeout_s:g} s and was stopped") from None
        finally:
            proc = self._proc
            if proc.poll() is None:
                self._kill()
            try:
                proc.wait(timeout=10)  # reap it: no zombie, no "still running" warning
            except subprocess.TimeoutExpired:
                pass
            t_out.join(timeout=2)
            t_err.join(timeout=2)
            for stream in (proc.stdout, proc.stderr):
                try:
                    stream.close()
                except OSError:
                    pass
            self._proc = None
        if self._cancel.is_set():
            raise ProbeCancelled("the probe was cancelled")
        if result is not None and rc == 0:
            return result
        if error:
            raise ProbeError(f"the probe failed: {error}")
        tail = "".join(err_tail).strip().splitlines()[-1:] or [""]
        how = f"signal {-rc}" if rc < 0 else f"exit code {rc}"
        raise ProbeError(f"the probe worker crashed ({how}){': ' + tail[0][:200] if tail[0] else ''}")
