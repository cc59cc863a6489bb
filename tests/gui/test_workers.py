"""The background task runner (planner_app/ui/workers.py): the latest task wins, results and errors
come back on the GUI thread, and on CPython 3.11 the cyclic garbage collector is off exactly while
a task is queued or running (its collector can crash reading a frame another thread is setting up,
python/cpython#111363), back on when the last one ends."""
import gc
import sys
import threading

from planner_app.ui import workers
from planner_app.ui.workers import TaskSlot, tasks_running


def test_a_task_runs_off_the_gui_thread_and_its_result_comes_back(qtbot):
    slot = TaskSlot()
    gui = threading.get_ident()
    seen = {}

    def task(progress, cancelled):
        seen["thread"] = threading.get_ident()
        seen["gc_on"] = gc.isenabled()
        progress(0.5, "half")
        return 42

    with qtbot.waitSignal(slot.succeeded, timeout=5000) as sig:
        slot.start(task)
    assert sig.args == [42] and seen["thread"] != gui
    qtbot.waitUntil(lambda: tasks_running() == 0, timeout=5000)
    if workers._GC_GUARD:
        assert seen["gc_on"] is False
    assert gc.isenabled()


def test_a_failing_task_reports_and_the_collector_comes_back(qtbot):
    slot = TaskSlot()

    def task(progress, cancelled):
        raise ValueError("tp: must divide the heads")

    with qtbot.waitSignal(slot.failed, timeout=5000) as sig:
        slot.start(task)
    assert isinstance(sig.args[0], ValueError)
    qtbot.waitUntil(lambda: tasks_running() == 0, timeout=5000)
    assert gc.isenabled()


def test_the_collector_stays_off_until_the_last_of_several_tasks_ends(qtbot):
    release = threading.Event()
    slots = [TaskSlot() for _ in range(3)]
    for s in slots:
        s.start(lambda progress, cancelled: release.wait(5))
    qtbot.waitUntil(lambda: tasks_running() == 3, timeout=5000)
    assert gc.isenabled() is (not workers._GC_GUARD)
    release.set()
    qtbot.waitUntil(lambda: tasks_running() == 0, timeout=5000)
    assert gc.isenabled()


def test_the_guard_is_for_python_3_11_only():
    assert workers._GC_GUARD is (sys.version_info[:2] == (3, 11))
