"""Where the shipped data lives: a checkout, an installed wheel, or a frozen bundle."""
from __future__ import annotations

import os
import sys
from functools import cache

APP_NAME = "gpu-capacity-planner"


def _candidates(name: str):
    if getattr(sys, "frozen", False):  # PyInstaller bundle
        yield os.path.join(getattr(sys, "_MEIPASS", os.path.dirname(sys.executable)), name)
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(os.path.dirname(here), name)  # source checkout / editable install
    yield os.path.join(sys.prefix, "share", APP_NAME, name)  # wheel data files


@cache
def data_dir(name: str) -> str:
    """Absolute path of a top-level data folder (``spec_data``, ``resources``, ``examples``)."""
    override = os.environ.get("PLANNER_" + name.upper())
    if override:
        return override
    for c in _candidates(name):
        if os.path.isdir(c):
            return c
    raise FileNotFoundError(f"cannot find the {name!r} folder (looked in: {', '.join(_candidates(name))})")


def spec_data_dir() -> str:
    return data_dir("spec_data")


def resources_dir() -> str:
    return data_dir("resources")


def examples_dir() -> str:
    return data_dir("examples")


def user_data_dir() -> str:
    """The user's data directory (the SQLite database, autosaves); PLANNER_USER_DIR overrides."""
    override = os.environ.get("PLANNER_USER_DIR")
    if override:
        return override
    import platformdirs  # lazy: keeps platformdirs off starts that need no user folder

    return platformdirs.user_data_dir(APP_NAME, appauthor=False)


def user_log_dir() -> str:
    override = os.environ.get("PLANNER_USER_DIR")
    if override:
        return os.path.join(override, "logs")
    import platformdirs  # lazy: keeps platformdirs off starts that need no user folder

    return platformdirs.user_log_dir(APP_NAME, appauthor=False)
