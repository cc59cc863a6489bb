"""The set-up installs every Debian package whose libraries Qt's real-window platform
plugin (xcb) links: without libxcb-cursor0, libxcb-icccm4 and libxcb-keysyms1 a fresh Debian
machine aborts with "Could not load the Qt platform plugin 'xcb'" although the offscreen
tests pass. The check reads ``ldd`` of the plugin and asks dpkg which package owns each
library, so a library Qt starts to need is caught here, not on a user's machine."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run_script_packages() -> set[str]:
    """The packages ./run installs (its ``qt_libs`` list)."""
    with open(os.path.join(ROOT, "run"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'qt_libs="([^"]*)"', text)
    assert m, "./run has no qt_libs list"
    return set(m.group(1).replace("\\\n", " ").split())


def _qt_xcb_libraries() -> list[str]:
    import PySide6
    qt = os.path.join(os.path.dirname(PySide6.__file__), "Qt")
    found = [os.path.join(qt, "plugins", "platforms", "libqxcb.so")]
    found += [os.path.join(qt, "lib", n) for n in ("libQt6XcbQpa.so.6", "libQt6Gui.so.6", "libQt6Core.so.6")]
    return [f for f in found if os.path.exists(f)]


def _owner(path: str) -> str | None:
    """The Debian package that owns ``path`` (trying the /lib and /usr/lib spellings of usrmerge)."""
    real = os.path.realpath(path)
    cands = {path, real}
    for p in list(cands):
        cands.add(p[4:] if p.startswith("/usr/") else "/usr" + p)
    for p in cands:
        r = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.split(":", 1)[0].strip()
    return None


@pytest.mark.skipif(not all(shutil.which(t) for t in ("dpkg", "ldd", "readelf")),
                    reason="needs a Debian-family system with binutils")
def test_run_installs_what_the_xcb_plugin_links():
    libs = _qt_xcb_libraries()
    assert libs, "PySide6's xcb platform plugin not found"
    needed, missing_now = {}, []
    for lib in libs:
        # the libraries this file names itself (its DT_NEEDED entries); what those pull in
        # comes with their packages' own dependencies
        direct = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]",
                                subprocess.run(["readelf", "-d", lib], capture_output=True, text=True).stdout))
        out = subprocess.run(["ldd", lib], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if "=> not found" in line:
                missing_now.append(line.split()[0])
                continue
            m = re.search(r"^\s*(\S+) => (/\S+)", line)
            if not m or m.group(1) not in direct or "/PySide6/" in m.group(2) or "/shiboken6/" in m.group(2):
                continue  # Qt's own libraries ship in the wheel
            owner = _owner(m.group(2))
            if owner and re.match(r"lib(x|egl|gl|dbus|fontconfig|freetype|glib|xkb)", owner):
                needed[owner.split(":")[0]] = m.group(2)
    assert not missing_now, f"the xcb plugin cannot load here: {missing_now} (install them in ./run)"
    listed = _run_script_packages()
    absent = sorted(set(needed) - listed)
    assert not absent, f"./run does not install {absent}, which Qt's xcb plugin links ({needed})"


def test_ci_starts_the_app_under_a_real_x_server():
    """.ci/run starts ``gpu-planner gui --smoke-test`` under Xvfb with the xcb platform."""
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        ci = f.read()
    assert "xvfb" in ci.lower() and "--smoke-test" in ci and "QT_QPA_PLATFORM=xcb" in ci and "./run tests" in ci
