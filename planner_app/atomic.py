"""Atomic file writing, one implementation for every writer (scenario and CSV files, reports,
chart exports, probe results): the output goes to a temporary file in the target's folder and
is renamed over the target only when complete, so a crash, a full disk or a failing writer
leaves neither a partial file nor a damaged older one. Standard library only (the probe's
torchrun workers import it)."""
from __future__ import annotations

import os
import re
import tempfile
import threading
from contextlib import contextmanager

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux's
    /proc/self/status); elsewhere set and restored at once under a lock."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 less the umask (mkstemp makes 0o600)."""
    return 0o666 & ~current_umask()


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process: not ours to judge
    return True


def remove_stale_temporaries(directory: str, prefix: str) -> None:
    """Temporary files ``prefix<pid>-*`` in ``directory`` whose writing process is gone (a
    writer killed with SIGKILL runs no cleanup): removed at the next write there. A file of a
    live process, or one not named by this module, is left alone."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)-")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        m = pattern.match(name)
        if m and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


@contextmanager
def atomic_path(path: str, suffix: str = "", prefix: str = ".tmp-"):
    """Yield a temporary path in ``path``'s folder for the caller to write; when the block
    ends without an exception the file gets the usual new-file mode (0o666 & ~umask), is
    flushed to disk and renamed over ``path``; on any exception (KeyboardInterrupt included)
    it is removed and the exception propagates. ``OSError`` from creating the temporary file
    or from the rename reaches the caller unchanged."""
    directory = os.path.dirname(os.path.abspath(path))
    remove_stale_temporaries(directory, prefix)
    # the writer's pid in the name: a later write can tell a killed writer's file from a live one's
    fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, new_file_mode())
        _fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: str, text: str, suffix: str = "") -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically (``atomic_path``)."""
    with atomic_path(path, suffix) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
