"""The desktop app's start-up path never imports pandas (~0.45 s of a 1.8 s start here,
issue 13): the main window up to its first results, and every page after it, the Specs
page included, work on the spec database's row lists. Run in a fresh process, since this
test session may have imported pandas already."""
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

CHILD = r"""
import sys, time
from PySide6.QtCore import QEventLoop
from planner_app.app import build_window, create_app
app = create_app()
win = build_window()
win.show()
deadline_s = time.monotonic() + 60
while win.plan_page.last_estimate is None and time.monotonic() < deadline_s:
    app.processEvents(QEventLoop.AllEvents, 20)
assert win.plan_page.last_estimate is not None, "no estimate on the Plan page"
assert "pandas" not in sys.modules, "pandas imported before the first results"
for _title, page in win.pages:  # builds every page that is not built yet, Specs included
    pass
win.specs_page.reload()
app.processEvents(QEventLoop.AllEvents, 20)
assert win.specs_page.models["gpus"].rowCount() > 0
assert "pandas" not in sys.modules, "pandas imported by a page"
win.doc._set_dirty(False)
win.shutdown()
print("OK")
"""


def test_window_and_pages_do_not_import_pandas(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PLANNER_USER_DIR=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0 and "OK" in p.stdout, p.stderr[-1500:]
