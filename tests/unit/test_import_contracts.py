"""The import contracts of pyproject.toml ([tool.importlinter]), run with import-linter: the
tree keeps them, and a forbidden import planted in a copy of the tree breaks them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _lint(tree_root: str) -> subprocess.CompletedProcess:
    exe = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    env = dict(os.environ, PYTHONPATH=tree_root)
    return subprocess.run([exe, "--config", os.path.join(tree_root, "pyproject.toml"), "--no-cache"], cwd=tree_root,
                          env=env, capture_output=True, text=True, timeout=300)


def test_the_tree_keeps_the_import_contracts():
    r = _lint(ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "5 kept, 0 broken" in r.stdout, r.stdout[-2000:]


def test_a_planted_forbidden_import_breaks_a_contract(tmp_path):
    copy = tmp_path / "tree"
    shutil.copytree(os.path.join(ROOT, "planner_app"), copy / "planner_app",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), copy / "pyproject.toml")
    flops = copy / "planner_app" / "core" / "models" / "flops.py"
    flops.write_text(flops.read_text(encoding="utf-8") + "\nfrom planner_app.cli import main  # planted\n",
                     encoding="utf-8")
    r = _lint(str(copy))
    assert r.returncode != 0
    assert "BROKEN" in r.stdout and "planner_app.core.models.flops -> planner_app.cli" in r.stdout, r.stdout[-2000:]
