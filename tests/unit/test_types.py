"""mypy (mypy.ini: the engine and the service) passes over the tree, and a type error planted in a
copy of the tree fails it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "mypy.ini")

pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]' brings it)")


def _mypy(cwd: str, config: str = CONFIG) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", config], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_the_engine_and_the_service_are_mypy_clean():
    r = _mypy(ROOT)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "Success" in out, out[-2000:]


def test_a_planted_type_error_fails(tmp_path):
    # the config travels with the copy: mypy reads its `files` relative to the config file
    shutil.copy(CONFIG, tmp_path / "mypy.ini")
    shutil.copytree(os.path.join(ROOT, "planner_app"), tmp_path / "planner_app",
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "planner_app" / "core" / "arrays.py"
    target.write_text(target.read_text(encoding="utf-8") + '\nx: int = "a"  # planted\n', encoding="utf-8")
    r = _mypy(str(tmp_path), str(tmp_path / "mypy.ini"))
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-2000:]
    planted = os.path.join("planner_app", "core", "arrays.py")
    assert planted in out and 'type "str", variable has type "int"' in out, out[-2000:]
    assert "Found 1 error in 1 file" in out, out[-2000:]  # the planted one alone
