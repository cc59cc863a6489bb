"""Screenshots of every page from a real window (Qt's xcb platform on an X server), in
English and Chinese, at 1440x900 and at the size the app opens with on a 1366x768 laptop
screen (the default window size, MainWindow.default_window_size), and Compare in meeting mode
(F11, full screen on a 1920x1080 screen) with 4 plans:

    python docs/screenshots/make_screenshots.py            # starts Xvfb itself (apt-get install xvfb)
    python docs/screenshots/make_screenshots.py --only compare-serving   # one of EXTRA only

Each (language, size) runs in its own process on its own Xvfb screen; the real app runs on the
example scenario and waits for each page's background work (the search and a quick CPU probe
run for real) before grabbing. Files: ``<page>[-default][-zh_CN].png``.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PAGES = ["workload", "plan", "compare", "scaling", "search", "serve", "probe", "specs"]
# Pages shot with another example loaded: (file name, page, example file). compare-serving: Compare
# with the serving rows of a scenario that has a serve section (issue 15); plan-inference: the Plan
# page of the inference example (Hugging Face generate(): memory, prefill, decode and what bounds it).
EXTRA = (("compare-serving", "compare", "china-70b-train-and-serve-aws-alibaba-tencent.json"),
         ("plan-inference", "plan", "inference-70b-service.json"))
# (suffix, X screen, window size or None for the app's default on that screen)
SIZES = (("", "1920x1080", (1440, 900)), ("-default", "1366x768", None))


def wait(app, cond, timeout_s=60):
    from PySide6.QtCore import QEventLoop
    end = time.perf_counter() + timeout_s
    while not cond() and time.perf_counter() < end:
        app.processEvents(QEventLoop.AllEvents, 50)
    settle = time.perf_counter() + 0.5
    while time.perf_counter() < settle:
        app.processEvents(QEventLoop.AllEvents, 50)


def open_window(size, paths=None):
    """A main window (``paths``: scenario files to load), resized to ``size`` when given, shown."""
    from planner_app.app import build_window
    win = build_window(paths or ())
    if size:
        win.resize(*size)
    win.show()
    return win


def grab(win, out_dir: str, name: str, tail: str) -> str:
    """Save the window as ``name + tail``.png; the line the run prints for it."""
    path = os.path.join(out_dir, f"{name}{tail}.png")
    win.grab().save(path)
    return f"{path} {win.width()}x{win.height()}"


def close_window(win) -> None:
    win.doc._set_dirty(False)
    win.shutdown()
    win.close()


def shoot_extra(app, out_dir: str, tail: str, size, only=None) -> list[str]:
    """The EXTRA shots: each example loaded in a new window, its page grabbed."""
    from planner_app.paths import examples_dir
    shots = []
    for name, page, example in EXTRA:
        if only and name not in only:
            continue
        win = open_window(size, [os.path.join(examples_dir(), example)])
        win.nav.setCurrentRow(PAGES.index(page))
        if page == "plan":
            wait(app, lambda w=win: w.plan_page.last_estimate is not None)
        if page == "compare":
            wait(app, lambda w=win: bool(w.compare_page.results) and w.compare_page.serving is not None)
            win.compare_page.table.scrollToBottom()  # the serving rows come last
            wait(app, lambda: True)
        shots.append(grab(win, out_dir, name, tail))
        close_window(win)
    return shots


MEETING_EXAMPLE = "china-70b-train-and-serve-aws-alibaba-tencent.json"


def shoot_meeting(app, out_dir: str, lang_tail: str) -> str:
    """Compare in meeting mode (F11) on the 1920x1080 screen, with 4 plans: the 3-cloud example and
    an AWS p5.48xlarge added through Compare's "Add machines"."""
    from planner_app.paths import examples_dir
    win = open_window((1440, 900), [os.path.join(examples_dir(), MEETING_EXAMPLE)])
    wait(app, lambda: win.plan_page.last_estimate is not None)
    win.nav.setCurrentRow(PAGES.index("compare"))
    win.compare_page.add_machines([("instance", "p5.48xlarge")])
    win.toggle_meeting(True)
    wait(app, lambda: True)
    win.setGeometry(0, 0, 1920, 1080)  # Xvfb has no window manager to carry out full screen
    wait(app, lambda: len(win.compare_page.results) == 4 and win.compare_page.serving is not None)
    shot = grab(win, out_dir, "compare-meeting", lang_tail)
    close_window(win)
    return shot


def shoot(out_dir: str, lang: str, suffix: str, size, only=None) -> list[str]:
    """In this process: the app on the current X display, every page grabbed (with ``only``: the
    EXTRA shots named there)."""
    from planner_app import i18n
    from planner_app.app import create_app, install_cjk_font
    app = create_app()
    i18n.install(lang)
    install_cjk_font(app)
    tail = suffix + ("" if lang == "en" else f"-{lang}")
    if only:
        return shoot_extra(app, out_dir, tail, size, only)
    win = open_window(size)
    shots = []
    for i, name in enumerate(PAGES):
        win.nav.setCurrentRow(i)
        if name == "plan":
            wait(app, lambda: win.plan_page.last_estimate is not None)
        elif name == "compare":
            wait(app, lambda: bool(win.compare_page.results))
        elif name == "scaling":
            wait(app, lambda: bool(win.scaling_page.curves))
        elif name == "search":
            win.search_page.run_search()
            wait(app, lambda: win.search_page.result is not None, 120)
        elif name == "serve":
            wait(app, lambda: win.serve_page.last_result is not None)
            win.serve_page.run_search()
            wait(app, lambda: win.serve_page.search_result is not None, 120)
        elif name == "probe":
            win.probe_page.backend.set_value("numpy")
            win.probe_page.run_benchmarks()
            wait(app, lambda: win.probe_page.result is not None, 180)
        elif name == "specs":
            win.specs_page.views["gpus"].selectRow(0)
            wait(app, lambda: True)
        else:
            wait(app, lambda: True)
        shots.append(grab(win, out_dir, name, tail))
    close_window(win)
    shots += shoot_extra(app, out_dir, tail, size)
    if not suffix:  # once per language, on the 1920x1080 screen
        shots.append(shoot_meeting(app, out_dir, "" if lang == "en" else f"-{lang}"))
    return shots


def main(out_dir: str = HERE, only=()) -> int:
    xvfb = shutil.which("Xvfb")
    if not xvfb:
        print("Xvfb is not installed (apt-get install xvfb)", file=sys.stderr)
        return 2
    display = 77
    for lang in ("en", "zh_CN"):
        for suffix, screen, size in (SIZES[:1] if only else SIZES):
            display += 1
            server = subprocess.Popen([xvfb, f":{display}", "-screen", "0", f"{screen}x24", "-nolisten", "tcp"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                time.sleep(1.0)
                home = tempfile.mkdtemp(prefix="planner-shots-")  # a first start: no saved window geometry
                env = dict(os.environ, DISPLAY=f":{display}", QT_QPA_PLATFORM="xcb", PLANNER_USER_DIR=home,
                           XDG_CONFIG_HOME=home)
                arg = "" if size is None else f"{size[0]}x{size[1]}"
                r = subprocess.run([sys.executable, __file__, "--child", out_dir, lang, suffix, arg, ",".join(only)],
                                   env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
                print(r.stdout, end="")
                if r.returncode:
                    print(r.stderr[-3000:], file=sys.stderr)
                    return r.returncode
            finally:
                server.terminate()
                server.wait(10)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        out, lang, suffix, arg, only = sys.argv[2:7]
        size = tuple(int(v) for v in arg.split("x")) if arg else None
        sys.path.insert(0, ROOT)
        for line in shoot(out, lang, suffix, size, [n for n in only.split(",") if n]):
            print(line)
        sys.exit(0)
    sys.exit(main(only=tuple(sys.argv[sys.argv.index("--only") + 1:]) if "--only" in sys.argv else ()))
