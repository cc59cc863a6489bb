"""planner_app.atomic: the one atomic writer (scenario/CSV files, reports, chart exports, probe
results): complete files only, the old file kept on failure, no temporary left behind, and
the final file's mode from the umask (mkstemp's 0600 would hide reports from a group)."""
import os
import stat

import pytest

from planner_app.atomic import atomic_path, atomic_write_text, current_umask


@pytest.fixture
def umask():
    """Set a umask for one test and restore the process's afterwards."""
    saved = os.umask(0o022)
    os.umask(saved)

    def set_mask(mask):
        os.umask(mask)
    yield set_mask
    os.umask(saved)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_writes_and_replaces(tmp_path):
    p = tmp_path / "a.txt"
    atomic_write_text(str(p), "one\r\n")
    assert p.read_bytes() == b"one\r\n"  # newlines as given
    atomic_write_text(str(p), "two ✓")
    assert p.read_text(encoding="utf-8") == "two ✓"
    assert os.listdir(tmp_path) == ["a.txt"]


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_final_mode_follows_umask(tmp_path, umask, mask):
    umask(mask)
    assert current_umask() == mask
    p = tmp_path / "r.json"
    atomic_write_text(str(p), "{}")
    assert _mode(p) == 0o666 & ~mask
    with atomic_path(str(tmp_path / "c.png"), suffix=".png") as tmp:
        assert _mode(tmp) == 0o600  # mkstemp's mode while it is written
        with open(tmp, "wb") as f:
            f.write(b"x")
    assert _mode(tmp_path / "c.png") == 0o666 & ~mask
    # the same mode a plain open() gives
    with open(tmp_path / "plain", "w"):
        pass
    assert _mode(tmp_path / "plain") == _mode(p)


@pytest.mark.parametrize("error", [ValueError("writer failed"), KeyboardInterrupt()])
def test_failure_keeps_the_old_file_and_removes_the_temporary(tmp_path, error):
    p = tmp_path / "out.pdf"
    p.write_text("old")
    with pytest.raises(type(error)):
        with atomic_path(str(p), suffix=".pdf") as tmp:
            with open(tmp, "w") as f:
                f.write("half")
            raise error
    assert p.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.pdf"]


def test_writer_that_removes_the_temporary_fails_cleanly(tmp_path):
    p = tmp_path / "x.svg"
    with pytest.raises(OSError):
        with atomic_path(str(p), suffix=".svg") as tmp:
            os.unlink(tmp)  # e.g. an exporter that failed after deleting its output
    assert os.listdir(tmp_path) == []


def test_unwritable_folder_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        atomic_write_text(str(tmp_path / "missing" / "f.txt"), "x")


def test_every_writer_uses_it():
    """The four writers that had their own temp-file-and-rename now call this module."""
    import inspect

    from planner_app.probe import collectives
    from planner_app.report import writer
    from planner_app.specdb import importers

    assert importers.atomic_write_text is atomic_write_text
    assert "atomic_path(" in inspect.getsource(writer.write_report)
    assert "atomic_write_text(" in inspect.getsource(collectives)
    for mod in (writer, collectives, importers):
        src = inspect.getsource(mod)
        assert "mkstemp" not in src and "os.replace" not in src
    with open(os.path.join(os.path.dirname(writer.__file__), "..", "ui", "charts", "base.py"),
              encoding="utf-8") as f:
        chart_src = f.read()  # read, not imported: tests/unit stays free of Qt
    assert "atomic_path(" in chart_src and "mkstemp" not in chart_src
