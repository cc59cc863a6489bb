"""The import contracts of pyproject.toml ([tool.importlinter]), run with import-linter: the
tree keeps them, and a forbidden import planted in a copy of the tree breaks them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _lint(tree_root: str) -> subprocess.CompletedProcess:
    exe = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    env = dict(os.environ, PYTHONPATH=tree_root)
    return subprocess.run([exe, "--config", os.path.join(tree_root, "pyproject.toml"), "--no-cache"], cwd=tree_root,
                          env=env, capture_output=True, text=True, timeout=300)


def test_the_tree_keeps_the_import_contracts():
    r = _lint(ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "3 kept, 0 broken" in r.stdout, r.stdout[-2000:]


PLANTS = [
    # (file, planted line, what the report names)
    ("core/models/flops.py", "from planner_app.cli import main", "planner_app.core.models.flops -> planner_app.cli"),
    ("service/estimate.py", "from planner_app.report import model", "planner_app.service.estimate -> planner_app.report"),
    ("probe/runner.py", "from planner_app.service import estimate", "planner_app.probe.runner -> planner_app.service"),
    ("core/training/memory.py", "import torch", "planner_app.core.training.memory -> torch"),
]


@pytest.mark.parametrize("where,line,named", PLANTS, ids=[p[0] for p in PLANTS])
def test_a_planted_forbidden_import_breaks_a_contract(tmp_path, where, line, named):
    """Upward imports (the core calling the command line, the service a face, the probe the
    service: the cycle issue 28 removed) and a heavy library in the engine all break a contract."""
    copy = tmp_path / "tree"
    shutil.copytree(os.path.join(ROOT, "planner_app"), copy / "planner_app",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), copy / "pyproject.toml")
    target = copy / "planner_app" / where
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # planted\n", encoding="utf-8")
    r = _lint(str(copy))
    assert r.returncode != 0
    assert "BROKEN" in r.stdout and named in r.stdout, r.stdout[-2000:]
