"""What the wheel and the PyInstaller bundle ship: every data folder the app reads at run
time, a valid .desktop entry, an icon that renders. Reads the recipes; builds nothing."""
from __future__ import annotations

import ast
import configparser
import fnmatch
import glob
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = os.path.join(ROOT, "packaging", "gpu_planner.spec")
DESKTOP = os.path.join(ROOT, "packaging", "gpu-planner.desktop")
SVG = os.path.join(ROOT, "resources", "icons", "gpu-planner.svg")
PNG = os.path.join(ROOT, "resources", "icons", "gpu-planner.png")
SHARE = "share/gpu-capacity-planner"
# Folders planner_app/paths.py serves (spec_data_dir, resources_dir, examples_dir).
RUNTIME_FOLDERS = ("spec_data", "resources", "examples")
# Files in those folders that are sources for building, not read at run time.
BUILD_ONLY = ("resources/i18n/*.ts", "resources/i18n/*.json")


def _pyproject():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _runtime_files():
    out = []
    for top in RUNTIME_FOLDERS:
        for path in glob.glob(os.path.join(ROOT, top, "**", "*"), recursive=True):
            rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
            if os.path.isfile(path) and "__pycache__" not in rel and not any(fnmatch.fnmatch(rel, p) for p in BUILD_ONLY):
                out.append(rel)
    return sorted(out)


def test_paths_serves_the_folders_checked_here():
    src = _read(os.path.join(ROOT, "planner_app", "paths.py"))
    for name in RUNTIME_FOLDERS:
        assert f'data_dir("{name}")' in src
    assert f'"{SHARE.split("/")[1]}"' in src or "APP_NAME" in src


def test_wheel_data_files_install_every_runtime_file():
    data_files = _pyproject()["tool"]["setuptools"]["data-files"]
    installed = {}
    for dest, patterns in data_files.items():
        for pattern in patterns:
            for path in glob.glob(os.path.join(ROOT, pattern)):
                rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                installed.setdefault(rel, set()).add(f"{dest}/{os.path.basename(path)}")
    missing = [f for f in _runtime_files() if f not in installed]
    assert not missing, f"files the app reads at run time that a wheel would not install: {missing}"
    # ...and each lands where paths.py looks: share/gpu-capacity-planner/<same relative path>.
    for rel in _runtime_files():
        assert f"{SHARE}/{rel}" in installed[rel], (rel, installed[rel])
    assert "share/applications/gpu-planner.desktop" in installed.get("packaging/gpu-planner.desktop", ())


def _spec_globals():
    """DATA_DIRS, EXCLUDES and the data_files() helper of the spec, without PyInstaller."""
    tree = ast.parse(_read(SPEC))
    keep = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign, ast.AugAssign))
            and not (isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("PyInstaller"))]
    names = {"ROOT", "DATA_DIRS", "_ALWAYS_SKIP", "data_files", "EXCLUDES", "DROP_BINARIES", "DROP_PLUGINS",
             "KEEP_QT_LANGS", "_keep_binary", "_keep_data"}

    def wanted(n):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            return True
        if isinstance(n, ast.FunctionDef):
            return n.name in names
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        return all(isinstance(t, ast.Name) and t.id in names for t in targets)

    mod = ast.Module(body=[n for n in keep if wanted(n)], type_ignores=[])
    ns = {"SPECPATH": os.path.dirname(SPEC)}
    exec(compile(mod, SPEC, "exec"), ns)
    return ns


def test_spec_bundles_every_runtime_file_where_paths_finds_it():
    ns = _spec_globals()
    assert set(RUNTIME_FOLDERS) <= set(ns["DATA_DIRS"])
    bundled = set()
    for name, skip in ns["DATA_DIRS"].items():
        for src, dest in ns["data_files"](name, skip):
            rel = os.path.relpath(src, ROOT).replace(os.sep, "/")
            assert dest.replace(os.sep, "/") == os.path.dirname(rel), (src, dest)  # same layout under _MEIPASS
            bundled.add(rel)
    missing = [f for f in _runtime_files() if f not in bundled]
    assert not missing, f"files the app reads at run time that the bundle would leave out: {missing}"
    assert "resources/i18n/planner_zh_CN.qm" in bundled
    assert not any(f.endswith(".ts") for f in bundled)


def test_spec_keeps_gpu_libraries_and_unused_qt_out():
    ns = _spec_globals()
    for mod in ("torch", "cupy", "transformers", "PySide6.QtWebEngineCore", "PySide6.QtQuick", "PySide6.QtNetwork"):
        assert mod in ns["EXCLUDES"], mod
    for needed in ("PySide6.QtGui", "PySide6.QtWidgets", "PySide6.QtSvg", "PySide6.QtOpenGL",
                   "PySide6.QtOpenGLWidgets", "PySide6.QtPrintSupport"):
        assert needed not in ns["EXCLUDES"], needed


def test_spec_keeps_qts_own_chinese_catalogue():
    # planner_app/i18n.py installs qtbase_zh_CN.qm (Qt's standard buttons and dialogs) from
    # PySide6's Qt/translations beside the app's catalogue; the bundle must keep it.
    keep = _spec_globals()["_keep_data"]
    for folder in ("PySide6/Qt/translations", os.path.join("PySide6", "Qt", "translations")):
        assert keep(os.path.join(folder, "qtbase_zh_CN.qm"), "src")
        assert not keep(os.path.join(folder, "qtbase_de.qm"), "src")


def test_entry_script_runs_the_cli():
    src = _read(os.path.join(ROOT, "packaging", "gpu_planner_entry.py"))
    assert "from planner_app.cli import main" in src and "sys.exit(main())" in src
    scripts = _pyproject()["project"]["scripts"]
    assert scripts["gpu-planner"] == "planner_app.cli:main"


def test_desktop_file_is_valid():
    cp = configparser.ConfigParser(interpolation=None, strict=True)
    cp.optionxform = str  # keys are case-sensitive
    with open(DESKTOP, encoding="utf-8") as f:
        text = f.read()
    cp.read_string(text)
    assert cp.sections() == ["Desktop Entry"]
    e = cp["Desktop Entry"]
    assert e["Type"] == "Application"
    assert e["Name"]
    assert e["Exec"].split()[0] == "gpu-planner" and "gui" in e["Exec"].split()
    assert e["Icon"] == "gpu-planner"  # an icon-theme name, installed as gpu-planner.svg/png
    cats = e["Categories"]
    assert cats.endswith(";") and {"Development", "Science"} & set(cats.split(";"))
    for k in e:
        assert k.split("[")[0] in {"Type", "Version", "Name", "GenericName", "Comment", "Exec", "TryExec", "Icon",
                                   "Terminal", "Categories", "Keywords", "MimeType", "StartupNotify",
                                   "StartupWMClass"}, f"unknown key {k}"
    assert e["Terminal"] in ("true", "false") and e["StartupNotify"] in ("true", "false")
    field_codes = [w for w in e["Exec"].split() if w.startswith("%")]
    assert set(field_codes) <= {"%f", "%F", "%u", "%U"}


def test_icon_renders(qapp):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    r = QSvgRenderer(SVG)
    assert r.isValid()
    img = QImage(64, 64, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.transparent)
    p = QPainter(img)
    r.render(p)
    p.end()
    assert img.pixelColor(32, 32).alpha() == 255  # the middle is painted
    assert img.pixelColor(0, 0).alpha() == 0  # rounded corners stay transparent
    png = QImage(PNG)
    assert (png.width(), png.height()) == (256, 256)


def test_build_script_runs_the_three_smoke_commands():
    src = _read(os.path.join(ROOT, "packaging", "build.sh"))
    assert "--version" in src
    assert "estimate --model llama-2-7b --gpu h100-sxm --json" in src
    assert "gui --smoke-test" in src and "QT_QPA_PLATFORM=offscreen" in src
    assert "pyinstaller" in src.lower() and "gpu_planner.spec" in src
    if sys.platform != "win32":
        assert os.access(os.path.join(ROOT, "packaging", "build.sh"), os.X_OK)
