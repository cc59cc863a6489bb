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


# pandas costs ~0.5 s to import here, more than a whole `estimate` process may take (issue 13):
# the spec database is read with the csv module, and these commands never import pandas.
PANDAS_FREE_COMMANDS = {
    "estimate": ["estimate", "--model", "llama-3.1-70b", "--instance", "p5.48xlarge", "--gpus", "256", "--tp", "8",
                 "--pp", "4", "--json"],
    "estimate-inference": ["estimate", "--mode", "inference", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                           "--batch", "8", "--json"],
    "search": ["search", "--model", "llama-3.1-8b", "--tokens", "1e10", "--gpu", "h100-sxm", "--max-gpus", "16",
               "--json"],
    "scaling": ["scaling", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "64", "--json"],
    "models": ["models", "--json"],
    "specs-json": ["specs", "instances", "--json"],
    "specs-csv": ["specs", "gpus", "--csv"],
}


def test_cli_commands_do_not_import_pandas(tmp_path):
    code = ("import contextlib, io, sys; from planner_app import cli\n"
            f"for name, argv in {PANDAS_FREE_COMMANDS!r}.items():\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        rc = cli.main(argv)\n"
            "    assert rc == 0, (name, rc)\n"
            "    assert 'pandas' not in sys.modules, f'{name} imported pandas'\n")
    env = dict(os.environ, PLANNER_USER_DIR=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-800:]


def test_report_command_does_not_import_pandas(tmp_path):
    from planner_app import scenario

    code = ("import sys; from planner_app import cli; "
            f"assert cli.main(['report', {scenario.examples()[0]!r}, '-o', {str(tmp_path / 'r.json')!r}]) == 0; "
            "assert 'pandas' not in sys.modules, 'pandas imported'")
    env = dict(os.environ, PLANNER_USER_DIR=str(tmp_path), QT_QPA_PLATFORM="offscreen")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr[-800:]


def test_spec_frames_are_built_on_first_use():
    """DataFrames stay available to scripts (``db.gpus``), built from the same rows."""
    code = ("import sys; from planner_app.specdb.catalog import SpecDB; db = SpecDB(); "
            "assert 'pandas' not in sys.modules; df = db.gpus; "
            "assert 'pandas' in sys.modules and len(df) == len(db.records['gpus']); "
            "assert list(df.columns) == db.columns('gpus') and df.attrs['path'].endswith('gpus.csv')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-800:]


def test_estimate_loads_a_single_threaded_blas_and_leaves_the_environment_alone(tmp_path):
    """``estimate`` loads numpy with one OpenBLAS thread (its spinning workers cost ~60 ms of
    CPU per process) and removes the variable again, so no child process inherits it."""
    if not os.path.isdir("/proc/self/task"):
        import pytest
        pytest.skip("counts threads through Linux's /proc")
    code = ("import contextlib, io, os; from planner_app import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert cli.main(['estimate', '--model', 'gpt2', '--gpu', 'h100 sxm', '--json']) == 0\n"
            "assert 'OPENBLAS_NUM_THREADS' not in os.environ\n"
            "assert len(os.listdir('/proc/self/task')) == 1, os.listdir('/proc/self/task')\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PLANNER_USER_DIR"] = str(tmp_path)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr[-800:]
