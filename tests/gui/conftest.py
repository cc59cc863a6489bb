"""GUI fixtures: the real main window (offscreen) on the example scenario, with a private
user database; a fixture fails a test that leaves worker threads running."""
import pytest


@pytest.fixture
def userdb(tmp_path):
    from planner_app.specdb.userdb import UserDB
    db = UserDB(str(tmp_path / "user.sqlite"))
    yield db
    db.close()


@pytest.fixture
def settings(tmp_path):
    from PySide6.QtCore import QSettings

    from planner_app.ui.settings import Settings
    return Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))


_RECORDED = []


def fake_sample(index):
    """NVML telemetry stand-in (the one edge CI cannot have, a GPU): replays samples that
    planner_app.probe.telemetry recorded from the H200 machine's NVML."""
    import itertools
    import json
    import os
    import time
    if not _RECORDED:
        with open(os.path.join(os.path.dirname(__file__), "..", "data", "telemetry_h200.json")) as f:
            _RECORDED.append(itertools.cycle(json.load(f)))
    return dict(next(_RECORDED[0]), t_s=time.monotonic(), gpu=index)


@pytest.fixture
def window(qtbot, settings, userdb):
    from PySide6.QtCore import QThreadPool

    from planner_app.app import build_window
    win = build_window(settings=settings, userdb=userdb, sample_fn=fake_sample)
    # closed here, not by qtbot: qtbot closes its widgets before fixtures finish, and a
    # failed test can leave unsaved changes whose question would block the run
    win.resize(1440, 900)
    win.show()
    qtbot.waitUntil(lambda: win.plan_page.last_estimate is not None, timeout=20000)
    yield win
    win.doc._set_dirty(False)
    win.close()
    win.deleteLater()
    assert QThreadPool.globalInstance().activeThreadCount() == 0, "a test left worker threads running"


@pytest.fixture
def zh_window(qtbot, settings, userdb):
    """The main window in Chinese (zh_CN catalogue and the bundled CJK font); English again after."""
    from PySide6.QtCore import QThreadPool
    from PySide6.QtWidgets import QApplication

    from planner_app import i18n
    from planner_app.app import build_window, install_cjk_font

    assert i18n.install("zh_CN")
    install_cjk_font(QApplication.instance())
    win = build_window(settings=settings, userdb=userdb)
    win.resize(1440, 900)
    win.show()
    try:
        qtbot.waitUntil(lambda: win.plan_page.last_estimate is not None, timeout=20000)
        yield win
    finally:
        win.doc._set_dirty(False)
        win.close()
        win.deleteLater()
        i18n.install("en")
    assert QThreadPool.globalInstance().activeThreadCount() == 0, "a test left worker threads running"
