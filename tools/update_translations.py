"""Update the zh_CN translation catalogue from the code.

    python tools/update_translations.py            # lupdate -> glossary fill -> lrelease
    python tools/update_translations.py --no-fill  # lupdate -> lrelease only
    python tools/update_translations.py --refresh  # also apply glossary changes to finished entries
    python tools/update_translations.py --check    # change nothing; exit 1 when out of date

Steps:
1. ``pyside6-lupdate`` reads every ``planner_app/**/*.py`` and merges the strings it finds
   into ``resources/i18n/planner_zh_CN.ts`` (strings no longer in the code are dropped;
   no source locations are stored, so editing code does not churn the catalogue).
2. ``tools/translate_zh_cn.py`` fills unfinished entries from
   ``resources/i18n/zh_CN_glossary.json`` and prints those it has no translation for.
3. ``pyside6-lrelease`` compiles the ``.ts`` into ``planner_zh_CN.qm`` (what the app loads).

It also warns about calls lupdate cannot extract correctly (see ``planner_app/i18n.py``):
``tr("Context", "text")`` through ``planner_app.i18n.tr`` under the name ``tr`` is read
by lupdate as ``tr(text, disambiguation)`` and lands in the wrong context.
"""
from __future__ import annotations

import argparse
import ast
import filecmp
import glob
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
I18N_DIR = os.path.join(ROOT, "resources", "i18n")
LANG = "zh_CN"
TS_PATH = os.path.join(I18N_DIR, f"planner_{LANG}.ts")
QM_PATH = os.path.join(I18N_DIR, f"planner_{LANG}.qm")


def tool(name: str) -> str:
    """Path of a PySide6 tool (``pyside6-lupdate``...): next to this Python first, then PATH."""
    here = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found (it comes with PySide6; put its bin folder on PATH)")
    return found


def source_files(root: str = ROOT) -> list[str]:
    """Every Python file of the app, relative to ``root``, sorted."""
    files = glob.glob(os.path.join(root, "planner_app", "**", "*.py"), recursive=True)
    return sorted(os.path.relpath(f, root) for f in files if "__pycache__" not in f)


def run_lupdate(ts_path: str, root: str = ROOT, no_obsolete: bool = True) -> str:
    """Merge the strings of the app's sources into ``ts_path`` (created if missing)."""
    files = source_files(root)
    with tempfile.NamedTemporaryFile("w", suffix=".lst", delete=False, encoding="utf-8") as lst:
        lst.write("\n".join(os.path.join(root, f) for f in files) + "\n")
    try:
        cmd = [tool("pyside6-lupdate"), "-locations", "none", "-source-language", "en",
               "-target-language", LANG, f"@{lst.name}", "-ts", ts_path]
        if no_obsolete:
            cmd.insert(1, "-no-obsolete")
        p = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    finally:
        os.unlink(lst.name)
    if p.returncode != 0:
        raise RuntimeError(f"pyside6-lupdate failed ({p.returncode}): {p.stderr or p.stdout}")
    return (p.stdout + p.stderr).strip()


def run_lrelease(ts_path: str, qm_path: str) -> str:
    """Compile ``ts_path`` into ``qm_path`` (unfinished entries are left out, as Qt does)."""
    p = subprocess.run([tool("pyside6-lrelease"), "-silent", ts_path, "-qm", qm_path],
                       capture_output=True, text=True)
    if p.returncode != 0 or not os.path.isfile(qm_path):
        raise RuntimeError(f"pyside6-lrelease failed ({p.returncode}): {p.stderr or p.stdout}")
    return (p.stdout + p.stderr).strip()


def _string_arg(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def misread_calls(root: str = ROOT) -> list[str]:
    """Calls that lupdate would extract wrongly, as ``file:line: message`` lines.

    lupdate's Python parser reads any call named ``tr`` as ``tr(text, disambiguation, n)``
    in the context of the enclosing class (or the module object it is called on). So
    ``tr("Context", "text")`` with ``planner_app.i18n.tr`` imported as ``tr``, or
    ``i18n.tr("Context", "text")``, files ``"Context"`` as the text. Calls named
    ``translate`` are read as ``translate(context, text, disambiguation, n)``.
    """
    out = []
    for rel in source_files(root):
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), filename=rel)
        except SyntaxError:
            continue  # someone is mid-edit; lupdate reports it too
        tr_names, module_names = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "planner_app.i18n":
                tr_names |= {a.asname or a.name for a in node.names if a.name == "tr"}
            elif isinstance(node, ast.ImportFrom) and node.module == "planner_app":
                module_names |= {a.asname or a.name for a in node.names if a.name == "i18n"}
            elif isinstance(node, ast.Import):
                module_names |= {a.asname for a in node.names if a.name == "planner_app.i18n" and a.asname}
        for node in tree.body if rel != os.path.join("planner_app", "i18n.py") else ():
            if isinstance(node, ast.FunctionDef) and node.name == "tr":
                out.append(f"{rel}:{node.lineno}: a helper named tr: lupdate files the strings of its calls "
                           f"under the empty context, whatever context the helper uses at run time; call "
                           f"translate(\"Context\", \"text\") instead")
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            f = node.func
            plain = isinstance(f, ast.Name) and f.id == "tr" and "tr" in tr_names
            via_module = (isinstance(f, ast.Attribute) and f.attr == "tr"
                          and isinstance(f.value, ast.Name) and f.value.id in module_names)
            if (plain or via_module) and _string_arg(node.args[0]):
                out.append(f"{rel}:{node.lineno}: lupdate reads tr({node.args[0].value!r}, ...) as the text "
                           f"{node.args[0].value!r}; write `from planner_app.i18n import tr as translate` "
                           f"and translate({node.args[0].value!r}, ...)")
    return out


def _copy_or_new(src: str, dst: str) -> None:
    if os.path.isfile(src):
        shutil.copyfile(src, dst)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="lupdate + glossary fill + lrelease for zh_CN")
    ap.add_argument("--no-fill", action="store_true", help="do not fill entries from the glossary")
    ap.add_argument("--refresh", action="store_true",
                    help="also rewrite finished entries that the glossary now translates differently")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when the committed .ts/.qm differ from a fresh run")
    args = ap.parse_args(argv)

    for line in misread_calls():
        print("warning:", line, file=sys.stderr)

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import translate_zh_cn

    with tempfile.TemporaryDirectory() as tmp:
        ts = os.path.join(tmp, os.path.basename(TS_PATH)) if args.check else TS_PATH
        qm = os.path.join(tmp, os.path.basename(QM_PATH)) if args.check else QM_PATH
        if args.check:
            _copy_or_new(TS_PATH, ts)
        os.makedirs(os.path.dirname(ts), exist_ok=True)
        print(run_lupdate(ts))
        missing = []
        if not args.no_fill:
            result = translate_zh_cn.fill(ts, translate_zh_cn.load_glossary(), refresh=args.refresh)
            missing = result.missing
            print(f"glossary: {result.filled} filled, {result.finished} finished, {len(missing)} untranslated")
            # Let lupdate write the file back in its own layout, so diffs stay small.
            run_lupdate(ts)
        run_lrelease(ts, qm)
        for ctx, src in missing:
            print(f"untranslated: [{ctx}] {src!r}")
        if args.check:
            stale = [p for p, q in ((TS_PATH, ts), (QM_PATH, qm))
                     if not os.path.isfile(p) or not filecmp.cmp(p, q, shallow=False)]
            for p in stale:
                print(f"out of date: {os.path.relpath(p, ROOT)}")
            return 1 if stale else 0
    print(f"wrote {os.path.relpath(TS_PATH, ROOT)} and {os.path.relpath(QM_PATH, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
