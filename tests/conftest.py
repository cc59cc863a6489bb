"""Test configuration: Qt offscreen before any Qt import; a private user directory."""
import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Keep tests away from the real user's database and settings.
_USER_DIR = tempfile.mkdtemp(prefix="planner-tests-")
os.environ.setdefault("PLANNER_USER_DIR", _USER_DIR)

import pytest  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data")


@pytest.fixture(scope="session")
def data_dir():
    return DATA


@pytest.fixture(scope="session")
def db():
    from planner_app.specdb.catalog import shipped_db

    return shipped_db()
