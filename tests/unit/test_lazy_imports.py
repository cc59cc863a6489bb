"""Imports go at the top of the module (issue 28). An import inside a function is kept only where
it keeps a heavy or optional library (Qt, pandas, torch, a probe backend) off a start path, and
says so with a ``# lazy: <what it keeps off which start>`` comment on its line or the line above.
Importing the CLI loads none of the heavy libraries."""
import ast
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "planner_app")
LAZY = re.compile(r"#\s*lazy:\s*\S")
HEAVY = ("PySide6", "pyqtgraph", "pandas", "torch")


def unexplained_function_imports(path: str) -> list[str]:
    """``file:line`` of every import inside a function of ``path`` without a ``# lazy:``
    comment on its line or on the line above."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lines = source.splitlines()
    found = set()
    for fn in ast.walk(ast.parse(source, path)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.update(n.lineno for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom)))
    bad = []
    for line in sorted(found):
        above = lines[line - 2].strip() if line >= 2 else ""
        if not LAZY.search(lines[line - 1]) and not (above.startswith("#") and LAZY.match(above)):
            bad.append(f"{os.path.relpath(path, ROOT)}:{line}: {lines[line - 1].strip()}")
    return bad


def _modules(root: str):
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(dirpath, f)


def test_every_function_level_import_says_why_it_is_lazy():
    bad = [b for path in _modules(PACKAGE) for b in unexplained_function_imports(path)]
    assert not bad, ("imports inside functions without a '# lazy: <what it keeps off which start>' comment "
                     "(move them to the module's top, or say why not):\n" + "\n".join(bad))


def test_a_planted_function_level_import_is_flagged(tmp_path):
    module = tmp_path / "planted.py"
    module.write_text(
        "import os\n"
        "\n"
        "\n"
        "def plain():\n"
        "    import json\n"
        "    return json.dumps(os.sep)\n"
        "\n"
        "\n"
        "class Thing:\n"
        "    def method(self):\n"
        "        from collections import OrderedDict\n"
        "        return OrderedDict()\n"
        "\n"
        "\n"
        "def explained():\n"
        "    import pandas  # lazy: keeps pandas off the CLI's start\n"
        "    # lazy: keeps Qt off the CLI's start\n"
        "    from PySide6.QtCore import QTimer\n"
        "    return pandas, QTimer\n", encoding="utf-8")
    bad = unexplained_function_imports(str(module))
    assert [int(re.search(r":(\d+): ", b).group(1)) for b in bad] == [5, 11], bad
    assert bad[0].endswith("planted.py:5: import json"), bad


def test_importing_the_cli_loads_no_heavy_library():
    code = f"import planner_app.cli; import sys; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-800:]
    assert p.stdout.strip() == "[]", p.stdout
