"""The app in a real window: ``gpu-planner gui --smoke-test`` under Xvfb with Qt's xcb
platform (what a user's X server gives), not the offscreen platform the other GUI tests use.
On CI Xvfb is installed by .ci/run, so a missing X server fails there instead of skipping."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest


def _free_display() -> int:
    for n in range(90, 140):
        if not os.path.exists(f"/tmp/.X{n}-lock") and not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            return n
    raise RuntimeError("no free X display number")


@pytest.fixture
def xvfb():
    exe = shutil.which("Xvfb")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("Xvfb is missing on CI (.ci/run installs it)")
        pytest.skip("Xvfb not installed (apt-get install xvfb)")
    n = _free_display()
    proc = subprocess.Popen([exe, f":{n}", "-screen", "0", "1440x900x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("Xvfb did not start")
        time.sleep(0.05)
    yield f":{n}"
    proc.terminate()
    proc.wait(10)


def test_smoke_test_in_a_real_x_window(xvfb, tmp_path):
    env = dict(os.environ, DISPLAY=xvfb, QT_QPA_PLATFORM="xcb", PLANNER_USER_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "planner_app", "gui", "--smoke-test"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    assert "platform xcb" in r.stdout and "8 pages visited" in r.stdout and "OK" in r.stdout, r.stdout
    assert "Could not load the Qt platform plugin" not in r.stderr
