"""Probe worker isolation (issue 16): a descendant holding stdout open, a descendant that
leaves the process group, a parent killed with SIGKILL, malformed worker messages."""
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from planner_app.probe import procs
from planner_app.probe.runner import ProbeCancelled, ProbeError, ProbeRunner

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RESULT = json.dumps({"type": "result", "result": {"ok": 1}})
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and process groups")


def _alive(pid: int) -> bool:
    """A live process (a zombie left for init to reap is dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _group_members(pgid: int) -> list[int]:
    """Live processes of process group ``pgid``, by ``ps`` where there is one, else /proc."""
    if shutil.which("ps"):
        out = subprocess.run(["ps", "-eo", "pid=,pgid=,stat="], capture_output=True, text=True, check=True).stdout
        return [int(p) for p, g, st in (line.split()[:3] for line in out.splitlines() if line.strip())
                if int(g) == pgid and not st.startswith("Z")]
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(name))
    return found


def _wait_gone(pids, timeout_s=10.0) -> list[int]:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _worker(body: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(body)]


@linux_only
def test_a_child_keeping_stdout_open_does_not_hold_the_result(tmp_path):
    pid_file = tmp_path / "child.pid"
    cmd = _worker(f"""
        import subprocess
        p = subprocess.Popen(["sleep", "60"])  # inherits stdout and keeps it open
        open({str(pid_file)!r}, "w").write(str(p.pid))
        print({RESULT!r}, flush=True)
    """)
    t = time.monotonic()
    assert ProbeRunner(timeout_s=20, command=cmd).run("x") == {"ok": 1}
    assert time.monotonic() - t < 10  # was 60 s: the parent waited for the child's end of stdout
    assert _wait_gone([int(pid_file.read_text())]) == []  # the leftover child was killed with the run


@linux_only
@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_a_hung_worker_whose_child_keeps_stdout_open_stops_in_time(tmp_path, how):
    cmd = _worker("""
        import subprocess, time
        subprocess.Popen(["sleep", "60"])
        time.sleep(60)
    """)
    r = ProbeRunner(timeout_s=2 if how == "timeout" else 60, command=cmd)
    if how == "cancel":
        threading.Timer(0.5, r.cancel).start()
    t = time.monotonic()
    with pytest.raises(ProbeCancelled if how == "cancel" else ProbeError):
        r.run("x")
    assert time.monotonic() - t < 6


@linux_only
def test_a_grandchild_that_calls_setsid_is_stopped_with_the_run(tmp_path):
    pid_file = tmp_path / "gc.pid"
    cmd = _worker(f"""
        import os, subprocess, time
        p = subprocess.Popen(["setsid", "sleep", "60"], stdout=subprocess.DEVNULL)
        open({str(pid_file)!r}, "w").write(str(p.pid))
        time.sleep(60)
    """)
    with pytest.raises(ProbeError, match="within 3 s"):
        ProbeRunner(timeout_s=3, command=cmd).run("x")
    gc = int(pid_file.read_text())
    assert _wait_gone([gc]) == []


PARENT = """
import sys, threading
from planner_app.probe.runner import ProbeRunner
cmd = [sys.executable, "-c", sys.argv[1]]
r = ProbeRunner(timeout_s=120, command=cmd)
if sys.argv[2] == "exit":  # the parent's main thread ends while the probe runs on a worker thread
    threading.Thread(target=r.run, args=("x",), daemon=True).start()
    import time; time.sleep(2)
    sys.exit(0)
r.run("x")
"""

WORKER = """
import os, subprocess, sys, time
from planner_app.probe.procs import guard_worker
guard_worker()  # what planner_app.probe.worker.main does first
child = subprocess.Popen(["sleep", "120"])
escaped = subprocess.Popen(["setsid", "sleep", "120"])
with open({pid_file!r} + ".tmp", "w") as f:
    f.write(f"{{os.getpid()}} {{os.getpgrp()}} {{child.pid}} {{escaped.pid}}")
os.replace({pid_file!r} + ".tmp", {pid_file!r})
time.sleep(120)
"""


@linux_only
@pytest.mark.parametrize("how", ["sigkill", "exit"])
def test_no_worker_is_left_when_the_parent_dies(tmp_path, how):
    pid_file = tmp_path / "worker.pids"
    env = dict(os.environ, PYTHONPATH=ROOT)
    parent = subprocess.Popen([sys.executable, "-c", PARENT, WORKER.format(pid_file=str(pid_file)), how], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while not pid_file.exists() and time.monotonic() < end:
            time.sleep(0.05)
        assert pid_file.exists(), "the worker did not start"
        worker, pgid, child, escaped = map(int, pid_file.read_text().split())
        assert pgid == worker  # the worker leads its own process group
        assert _alive(worker) and _alive(child) and _alive(escaped)
        if how == "sigkill":
            parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        assert _wait_gone([worker, child, escaped]) == []
        assert _group_members(pgid) == []
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_the_real_worker_arms_the_guard():
    """planner_app.probe.worker runs guard_worker before anything else (the tests above run
    the guard itself, as a stand-in worker)."""
    import inspect

    from planner_app.probe import worker

    src = inspect.getsource(worker.main)
    assert src.index("guard_worker()") < src.index("task = argv[0]")


@pytest.mark.parametrize("line, match", [
    ('{"type": "progress", "fraction": "abc"}', "fraction"),
    ('{"type": "progress", "fraction": 2.5}', "fraction"),
    ('{"type": "progress", "fraction": NaN}', "fraction"),
    ('{"type": "progress", "fraction": 0.5, "text": 7}', "text"),
    ('{"type": "result", "result": {}}', "result"),
    ('{"type": "result", "result": 5}', "result"),
    ('{"type": "result", "result": null}', "result"),
    ('{"type": "error", "message": null}', "message"),
    ('{"type": "surprise"}', "type"),
])
def test_malformed_worker_messages_are_one_clear_error(line, match):
    cmd = [sys.executable, "-c", f"print({line!r}, flush=True); print({RESULT!r}, flush=True)"]
    with pytest.raises(ProbeError, match="malformed") as e:
        ProbeRunner(timeout_s=20, command=cmd).run("x", progress=lambda f, t: None)
    assert match in str(e.value) and "\n" not in str(e.value)


def _bench_result(**changes):
    with open(os.path.join(ROOT, "tests", "data", "probe_h200.json")) as f:
        d = json.load(f)
    r = {k: d[k] for k in ("device", "backend", "gemm", "gemm_best_tflops", "bandwidth", "notes")}
    for path, value in changes.items():
        kind, i, key = path.split(".")
        r[kind][int(i)][key] = value
    return r


@pytest.mark.parametrize("changes, field", [
    ({"bandwidth.0.gbps": float("nan")}, "bandwidth[0].gbps"), ({"bandwidth.0.gbps": -5.0}, "bandwidth[0].gbps"),
    ({"gemm.0.tflops": -1.0}, "gemm[0].tflops"), ({"gemm.0.tflops": "fast"}, "gemm[0].tflops"),
    ({"gemm.1.m": 0}, "gemm[1].m"), ({"gemm.0.tflops": float("inf")}, "gemm[0].tflops"),
])
def test_impossible_benchmark_results_are_refused(tmp_path, changes, field):
    """A broken backend's NaN or negative rate never reaches a verdict or a calibration profile."""
    f = tmp_path / "msg.json"
    f.write_text(json.dumps({"type": "result", "result": _bench_result(**changes)}))  # NaN as JSON's NaN
    cmd = [sys.executable, "-c", f"print(open({str(f)!r}).read(), flush=True)"]
    with pytest.raises(ProbeError, match="malformed") as e:
        ProbeRunner(timeout_s=20, command=cmd).run("bench")
    assert field in str(e.value)


def test_a_valid_benchmark_result_passes(tmp_path):
    f = tmp_path / "msg.json"
    f.write_text(json.dumps({"type": "result", "result": _bench_result()}))
    cmd = [sys.executable, "-c", f"print(open({str(f)!r}).read(), flush=True)"]
    assert ProbeRunner(timeout_s=20, command=cmd).run("bench")["backend"] == "torch"


def test_library_chatter_on_stdout_is_not_a_message():
    cmd = [sys.executable, "-c", f"print('5'); print('[1, 2]'); print('{{oops'); print({RESULT!r})"]
    assert ProbeRunner(timeout_s=20, command=cmd).run("x") == {"ok": 1}


def test_a_worker_that_exits_without_a_result_says_so():
    with pytest.raises(ProbeError, match="without a result"):
        ProbeRunner(timeout_s=20, command=[sys.executable, "-c", "print('[1,2]')"]).run("x")


def test_the_run_token_finds_only_the_runs_processes():
    assert procs.run_members("no-such-token") == []
