"""GUI speed, three numbers:

1. launch of ``gpu-planner gui`` (``python -m planner_app gui``, the real entry: settings,
   translator, theme, catalog, every page, the example scenario) to the Plan page's first
   estimate painted on screen (goal <= 1.5 s; PLANNER_EXIT_AFTER_RESULTS makes the app print
   the moment and quit);
2. process start to the first painted main window (the window alone);
3. an edit to updated results on the Plan page (goal <= 100 ms).

Offscreen unless QT_QPA_PLATFORM says otherwise (xcb with DISPLAY: a real X server);
prints medians and ratios to the goals.

    python -m benchmarks.speed.gui_speed
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import time, sys
from PySide6.QtCore import QObject, QEvent
from planner_app.app import create_app, build_window, install_cjk_font
app = create_app()
install_cjk_font(app)
win = build_window()
class Painted(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Paint:
            print("PAINT", time.time(), flush=True)
            app.exit(0)
        return False
f = Painted()
win.installEventFilter(f)
win.resize(1440, 900)
win.show()
app.exec()
win.doc._set_dirty(False)
win.shutdown()
"""


def startup_s(runs=5) -> list[float]:
    out = []
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
               PLANNER_USER_DIR=tempfile.mkdtemp())
    for _ in range(runs):
        t0 = time.time()
        r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120)
        line = [x for x in r.stdout.splitlines() if x.startswith("PAINT")]
        if not line:
            raise RuntimeError(r.stderr[-2000:])
        out.append(float(line[0].split()[1]) - t0)
    return out


def results_on_screen_s(runs=5) -> list[float]:
    """``gpu-planner gui`` launched to its first estimate painted, in seconds (median of runs)."""
    out = []
    for _ in range(runs):
        home = tempfile.mkdtemp()
        env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
                   PLANNER_USER_DIR=home, XDG_CONFIG_HOME=home, PLANNER_EXIT_AFTER_RESULTS="1")
        t0 = time.time()
        r = subprocess.run([sys.executable, "-m", "planner_app", "gui"], env=env, capture_output=True, text=True,
                           timeout=120)
        line = [x for x in r.stdout.splitlines() if x.startswith("RESULTS")]
        if not line:
            raise RuntimeError(r.stderr[-2000:])
        out.append(float(line[0].split()[1]) - t0)
    return out


def edit_latency_ms(edits=20) -> list[float]:
    os.environ.setdefault("PLANNER_USER_DIR", tempfile.mkdtemp())
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop

    from planner_app.app import build_window, create_app
    app = create_app()
    win = build_window()
    win.show()
    page = win.plan_page
    end = time.perf_counter() + 30
    while page.last_estimate is None and time.perf_counter() < end:
        app.processEvents(QEventLoop.AllEvents, 20)
    times = []
    for i in range(edits):
        got = []
        page.estimated.connect(got.append)
        t0 = time.perf_counter()
        page.layout_form.widget("pp").setValue(8 if i % 2 == 0 else 4)
        while not got:
            app.processEvents(QEventLoop.AllEvents, 5)
        times.append((time.perf_counter() - t0) * 1e3)
        page.estimated.disconnect(got.append)
    win.doc._set_dirty(False)
    win.shutdown()
    return times


if __name__ == "__main__":
    r = results_on_screen_s()
    print(f"gpu-planner gui launched to results on screen: median {statistics.median(r):.2f} s (min {min(r):.2f}, "
          f"max {max(r):.2f}) over {len(r)} runs; goal 1.5 s -> ratio {statistics.median(r) / 1.5:.2f}")
    s = startup_s()
    print(f"process start to the window's first paint: median {statistics.median(s):.2f} s (min {min(s):.2f}, max {max(s):.2f}) over "
          f"{len(s)} runs; goal 1.5 s -> ratio {statistics.median(s) / 1.5:.2f}")
    e = edit_latency_ms()
    print(f"edit to updated Plan results (70B, 512 GPUs, Megatron): median {statistics.median(e):.0f} ms "
          f"(max {max(e):.0f}) over {len(e)} edits (including the 60 ms debounce); goal 100 ms -> ratio "
          f"{statistics.median(e) / 100:.2f}")
