"""Screenshots of every page at 1440x900 (offscreen): python docs/screenshots/make_screenshots.py
Runs the real app on the example scenario: waits for each page's background work (the
search and a quick CPU probe run for real) before grabbing."""
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = os.path.dirname(os.path.abspath(__file__))


def wait(app, cond, timeout_s=60):
    from PySide6.QtCore import QEventLoop
    end = time.perf_counter() + timeout_s
    while not cond() and time.perf_counter() < end:
        app.processEvents(QEventLoop.AllEvents, 50)
    settle = time.perf_counter() + 0.4
    while time.perf_counter() < settle:
        app.processEvents(QEventLoop.AllEvents, 50)


def main(out_dir=HERE, lang="en"):
    from planner_app import i18n
    from planner_app.app import build_window, create_app, install_cjk_font
    app = create_app()
    i18n.install(lang)
    install_cjk_font(app)
    win = build_window()
    win.resize(1440, 900)
    win.show()
    shots = []
    suffix = "" if lang == "en" else f"-{lang}"
    for i, (title, page) in enumerate(win.pages):
        win.nav.setCurrentRow(i)
        name = ["workload", "plan", "compare", "scaling", "search", "probe", "specs"][i]
        if name == "plan":
            wait(app, lambda: win.plan_page.last_estimate is not None)
        elif name == "compare":
            wait(app, lambda: bool(win.compare_page.results))
        elif name == "scaling":
            wait(app, lambda: bool(win.scaling_page.curves))
        elif name == "search":
            win.search_page.run_search()
            wait(app, lambda: win.search_page.result is not None, 120)
        elif name == "probe":
            win.probe_page.backend.set_value("numpy")
            win.probe_page.run_benchmarks()
            wait(app, lambda: win.probe_page.result is not None, 180)
        elif name == "specs":
            win.specs_page.views["gpus"].selectRow(0)
        else:
            wait(app, lambda: True)
        path = os.path.join(out_dir, f"{name}{suffix}.png")
        win.grab().save(path)
        shots.append(path)
    win.doc._set_dirty(False)
    win.shutdown()
    win.close()
    for s in shots:
        print(s)


if __name__ == "__main__":
    main(lang=sys.argv[1] if len(sys.argv) > 1 else "en")
