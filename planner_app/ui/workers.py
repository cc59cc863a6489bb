"""Background work for the UI: plain functions that take ``progress(fraction, text)`` and
``cancelled()`` callbacks run on Qt's thread pool; results come back as signals on the
GUI thread. A ``TaskSlot`` per panel keeps only the latest task: starting a new one
cancels the previous, whose late result is dropped."""
from __future__ import annotations

import gc
import itertools
import sys
import threading
import traceback

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

# CPython 3.11: the cyclic garbage collector running on one thread can read a frame that another
# thread is still setting up at a call and crash (python/cpython#111363; #101975 fixed one such
# case for tracing). Seen here: the GUI thread in the collector while a task's thread entered an
# engine function (Fatal Python error: Segmentation fault, twice in five full test runs). While a
# task runs Python on the pool, automatic collection is off; it is back on when the last task
# ends (3.12 reworked frames; earlier and later versions are left alone).
_GC_GUARD = sys.version_info[:2] == (3, 11)
_RUNNING = [0]
_RUNNING_LOCK = threading.Lock()


def _task_starting() -> None:
    """A task is about to run on the pool (called on the GUI thread, before it is queued)."""
    with _RUNNING_LOCK:
        _RUNNING[0] += 1
        if _GC_GUARD:
            gc.disable()


def _task_ended() -> None:
    """A task's function returned or raised (called on the pool's thread, as its last step)."""
    with _RUNNING_LOCK:
        _RUNNING[0] -= 1
        if _GC_GUARD and _RUNNING[0] == 0:
            gc.enable()


def tasks_running() -> int:
    """Tasks queued or running on the pool now."""
    return _RUNNING[0]


class _Signals(QObject):
    progressed = Signal(int, float, str)
    succeeded = Signal(int, object)
    failed = Signal(int, object, str)


class _Job(QRunnable):
    def __init__(self, ident, fn, signals, cancel_flag):
        super().__init__()
        self.ident, self.fn, self.signals, self.cancel_flag = ident, fn, signals, cancel_flag
        self.setAutoDelete(True)

    def run(self):
        try:
            result = self.fn(lambda f, t="": self.signals.progressed.emit(self.ident, float(f), str(t)),
                             lambda: self.cancel_flag[0])
        except Exception as e:  # noqa: BLE001 - reported to the page that asked
            self.signals.failed.emit(self.ident, e, traceback.format_exc())
            return
        finally:
            _task_ended()
        self.signals.succeeded.emit(self.ident, result)


class TaskSlot(QObject):
    """Runs one background task at a time for a panel; the latest started wins."""

    progressed = Signal(float, str)
    succeeded = Signal(object)
    failed = Signal(object)  # the exception
    finished = Signal()
    _ids = itertools.count(1)

    def __init__(self, parent=None, pool: QThreadPool | None = None):
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._signals = _Signals()
        self._signals.progressed.connect(self._on_progress)
        self._signals.succeeded.connect(self._on_success)
        self._signals.failed.connect(self._on_failure)
        self._current = None
        self._cancel = [False]
        self._on_cancel = None

    @property
    def busy(self) -> bool:
        return self._current is not None

    def start(self, fn, on_cancel=None) -> int:
        """Run ``fn(progress, cancelled)``; a running task is cancelled first."""
        self.cancel()
        self._cancel = [False]
        self._on_cancel = on_cancel
        ident = next(self._ids)
        self._current = ident
        _task_starting()
        self._pool.start(_Job(ident, fn, self._signals, self._cancel))
        return ident

    def cancel(self) -> None:
        if self._current is None:
            return
        self._cancel[0] = True
        if self._on_cancel is not None:
            try:
                self._on_cancel()
            except Exception:  # noqa: BLE001 - best effort (a process already gone)
                pass
        self._current = None
        self.finished.emit()

    def wait(self, msecs: int = 10000) -> bool:
        return self._pool.waitForDone(msecs)

    def _on_progress(self, ident, frac, text):
        if ident == self._current:
            self.progressed.emit(frac, text)

    def _on_success(self, ident, result):
        if ident == self._current:
            self._current = None
            self.succeeded.emit(result)
            self.finished.emit()

    def _on_failure(self, ident, exc, tb):
        if ident == self._current:
            self._current = None
            exc.traceback_text = tb
            self.failed.emit(exc)
            self.finished.emit()


class RecomputeWhenVisible:
    """Mixin for pages whose results follow the scenario: an edit starts the page's debounce
    timer only while the page is on screen; a hidden page just remembers it is stale and
    recomputes when shown (the Plan page's estimate is not redone by every page on every key)."""

    _stale = True

    def request_recompute(self, *_args) -> None:
        if self.isVisible():
            self.timer.start()
        else:
            self._stale = True

    def showEvent(self, event):  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self.timer.start()
