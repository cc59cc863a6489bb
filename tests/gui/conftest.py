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


def fake_sample(index):
    """NVML telemetry stand-in: the one edge CI cannot have (a GPU)."""
    import time
    return {"t_s": time.monotonic(), "gpu": index, "sm_clock_mhz": 1980, "mem_clock_mhz": 2619, "power_w": 350.0,
            "temperature_c": 55, "utilization_gpu_pct": 97, "utilization_mem_pct": 40, "memory_used_bytes": 2**34}


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
