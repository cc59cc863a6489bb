"""STYLE.md's dependency rules: core/ imports no Qt, no pandas, no GPU library; core and
specdb never import ui; importing the CLI does not import Qt."""
import ast
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "planner_app")
FORBIDDEN_IN_CORE = {"PySide6", "pyqtgraph", "pandas", "torch", "cupy", "pynvml", "shiboken6"}


def _imports(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name.split(".")[0], a.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0], node.module


def _modules(sub):
    for dirpath, _, files in os.walk(os.path.join(ROOT, sub)):
        for f in files:
            if f.endswith(".py"):
                yield os.path.join(dirpath, f)


def test_core_is_pure():
    bad = []
    for path in _modules("core"):
        for top, full in _imports(path):
            if top in FORBIDDEN_IN_CORE or full.startswith(("planner_app.ui", "planner_app.specdb",
                                                             "planner_app.probe.", "planner_app.report")):
                bad.append((os.path.relpath(path, ROOT), full))
    assert not bad, bad


def test_specdb_and_report_model_do_not_import_ui():
    bad = []
    for sub in ("specdb", "probe"):
        for path in _modules(sub):
            for top, full in _imports(path):
                if full.startswith("planner_app.ui") or top in ("PySide6", "pyqtgraph"):
                    bad.append((os.path.relpath(path, ROOT), full))
    assert not bad, bad


def test_cli_estimate_does_not_load_qt():
    code = ("import sys; from planner_app import cli; "
            "cli.main(['estimate', '--model', 'gpt2', '--gpu', 'h100 sxm', '--json']); "
            "assert 'PySide6' not in sys.modules, 'Qt imported'")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-500:]
