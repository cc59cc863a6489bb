"""./run on a fresh machine says what it does (issue 29, item 16): a line before each set-up step
(the environment, pip's long install with how long it takes, byte-compiling), pip's progress one
package a line, nothing once set up; ``./run app ARGS`` passes ARGS to ``gpu-planner gui``.
Run in a sandbox: a copy of the script, a stand-in Python that records what it is asked to do."""
import os
import shutil
import stat
import subprocess

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

# The stand-in interpreter: `-m venv DIR` makes DIR/bin/python (itself) and DIR/bin/gpu-planner;
# pip prints two "Collecting" lines and noise; every call is logged.
FAKE_PYTHON = r"""#!/usr/bin/env bash
echo "python $*" >> "$RUN_LOG"
if [ "$1" = "--version" ]; then echo "Python 3.11.0"; exit 0; fi
if [ "$1 $2" = "-m venv" ]; then
    mkdir -p "$3/bin"
    cp "$0" "$3/bin/python"
    printf '#!/usr/bin/env bash\necho "gpu-planner $*" >> "$RUN_LOG"\n' > "$3/bin/gpu-planner"
    chmod +x "$3/bin/python" "$3/bin/gpu-planner"
    exit 0
fi
if [ "$1 $2 $3" = "-m pip install" ]; then
    echo "Looking in links: /nowhere"
    echo "Collecting numpy>=1.26 (from gpu-capacity-planner==0.1.0)"
    echo "  Using cached numpy.whl"
    echo "Collecting PySide6-Essentials<6.12,>=6.6 (from gpu-capacity-planner==0.1.0)"
    echo "Installing collected packages: numpy, PySide6-Essentials"
    exit 0
fi
exit 0
"""


def _sandbox(tmp_path):
    box = tmp_path / "checkout"
    box.mkdir()
    shutil.copy(os.path.join(ROOT, "run"), box / "run")
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), box / "pyproject.toml")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    py = bindir / "python3"
    py.write_text(FAKE_PYTHON)
    py.chmod(py.stat().st_mode | stat.S_IEXEC)
    # only the tools the script needs: no dpkg-query, so no apt-get step in a test
    for tool in ("bash", "env", "grep", "sed", "dirname", "mkdir", "cp", "chmod", "touch", "cat", "id", "printf"):
        found = shutil.which(tool)
        if found:
            (bindir / tool).symlink_to(found)
    log = tmp_path / "calls.log"
    env = {"PATH": str(bindir), "RUN_LOG": str(log), "PYTHON": str(py), "HOME": str(tmp_path)}
    return box, env, log


def test_first_start_says_each_step_and_a_set_up_start_says_nothing(tmp_path):
    box, env, log = _sandbox(tmp_path)
    r = subprocess.run(["bash", str(box / "run"), "app", "--page", "serve", "--lang", "zh_CN"], cwd=box, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    said = [line for line in lines if line.startswith("./run: ")]
    assert said[0].startswith("./run: Creating the Python environment .venv (Python 3.11.0)")
    assert said[1].startswith("./run: Installing PySide6") and "(first start only, 1-2 minutes)" in said[1]
    assert said[2].startswith("./run: Byte-compiling") and said[3].startswith("./run: Set-up done")
    # pip's progress: one indented line per package, between the install line and byte-compiling
    progress = lines[lines.index(said[1]) + 1:lines.index(said[2])]
    assert progress[:2] == ["    Collecting numpy>=1.26 (from gpu-capacity-planner==0.1.0)",
                            "    Collecting PySide6-Essentials<6.12,>=6.6 (from gpu-capacity-planner==0.1.0)"]
    assert "    Installing collected packages: numpy, PySide6-Essentials" in progress
    assert not any("Looking in links" in line or "Using cached" in line for line in lines)
    calls = log.read_text().splitlines()
    assert calls[-1] == "gpu-planner gui --page serve --lang zh_CN"  # ./run app passes its arguments through
    # the order of the work matches what was said
    kinds = [c.split()[1:3] for c in calls if c.startswith("python -m")]
    assert kinds[:3] == [["-m", "venv"], ["-m", "pip"], ["-m", "compileall"]]
    # set up: the second start goes straight to the app, silently
    log.write_text("")
    r = subprocess.run(["bash", str(box / "run"), "app"], cwd=box, env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert log.read_text().splitlines() == ["gpu-planner gui"]


def test_a_failed_install_stops_with_a_message(tmp_path):
    box, env, log = _sandbox(tmp_path)
    fake = tmp_path / "bin" / "python3"
    fake.write_text(FAKE_PYTHON.replace('if [ "$1 $2 $3" = "-m pip install" ]; then',
                                        'if [ "$1 $2 $3" = "-m pip install" ]; then\n'
                                        '    echo "ERROR: No matching distribution found for PySide6"; exit 1'))
    r = subprocess.run(["bash", str(box / "run"), "app"], cwd=box, env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0
    assert "    ERROR: No matching distribution found for PySide6" in r.stderr
    assert "./run: pip could not install the project (see above)" in r.stderr
    assert "gpu-planner" not in log.read_text()
