"""ruff ([tool.ruff] in pyproject.toml) passes over the whole tree, and a planted undefined name
in a copy of a module fails it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ruff(cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache"], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_the_tree_is_ruff_clean():
    r = _ruff(ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]


def test_a_planted_undefined_name_fails(tmp_path):
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), tmp_path / "pyproject.toml")
    (tmp_path / "planner_app").mkdir()
    src = os.path.join(ROOT, "planner_app", "core", "arrays.py")
    with open(src, encoding="utf-8") as f:
        text = f.read() + "\n\ndef planted():\n    return not_defined_anywhere\n"
    (tmp_path / "planner_app" / "arrays.py").write_text(text, encoding="utf-8")
    r = _ruff(str(tmp_path))
    assert r.returncode != 0 and "F821" in r.stdout, r.stdout[-2000:]
