"""The walk of a serving option from the CLI to the engine (issue 28): ``--max-num-seqs`` given on the
command line reaches the engine's Deployment as the request's field, and while the engine runs it
never calls back into the service, the scenario or a face. The import contracts (pyproject.toml,
tests/unit/test_import_contracts.py) forbid the import; this test watches the calls themselves."""
import contextlib
import functools
import io
import json
import os
import sys

import planner_app
from planner_app.cli import main

APP = os.path.dirname(os.path.abspath(planner_app.__file__)) + os.sep
UPPER = ("service", "scenario", "cli", "report", "ui", "app")  # the layers above the engine


def _layer(filename: str) -> str | None:
    """The planner_app layer a code object's file belongs to (None: outside the app)."""
    if not filename.startswith(APP):
        return None
    return filename[len(APP):].split(os.sep)[0].removesuffix(".py")


def _walk(argv):
    """Run the CLI under a profiler: (stdout, the calls from the core upward, the Deployments the
    engine received)."""
    upward, deployments = [], []

    def profile(frame, event, arg):
        if event != "call":
            return
        callee = _layer(frame.f_code.co_filename)
        caller = _layer(frame.f_back.f_code.co_filename) if frame.f_back is not None else None
        if caller == "core" and callee in UPPER:
            upward.append(f"{frame.f_back.f_code.co_name} -> {frame.f_code.co_qualname} ({callee})")
        if callee == "core" and frame.f_code.co_name == "steady_state":
            deployments.append(frame.f_locals.get("d"))

    out = io.StringIO()
    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(out):
            rc = main(argv)
    finally:
        sys.setprofile(None)
    assert rc == 0
    return out.getvalue(), upward, deployments


def test_a_serving_option_walks_down_and_the_core_never_calls_up():
    argv = ["serve", "--model", "llama-3.1-8b", "--gpu", "H100 SXM", "--isl", "1024", "--osl", "256",
            "--concurrency", "16", "--max-num-seqs", "7", "--json"]
    text, upward, deployments = _walk(argv)
    assert not upward, upward
    # the option arrived at the engine as the request's field, and the answer says so
    assert deployments and {d.max_num_seqs for d in deployments} == {7}
    est = json.loads(text)
    assert est["deployment"]["max_num_seqs"] == 7
    assert est["running_requests"] <= 7


def test_the_serving_search_walks_down_too():
    argv = ["serve", "--model", "llama-3.1-8b", "--gpu", "H100 SXM", "--isl", "1024", "--osl", "256",
            "--concurrency", "16", "--ttft-ms", "2000", "--tpot-ms", "50", "--max-num-seqs", "9", "--json"]
    text, upward, deployments = _walk(argv)
    assert not upward, upward
    assert deployments and {d.max_num_seqs for d in deployments} == {9}
    assert json.loads(text)["plans"]


def test_the_watch_sees_an_upward_call():
    """The profiler catches a core frame calling the service: a planted call through a core
    function that calls what it is given (functools.partial adds no Python frame between them)."""
    from planner_app.core.training.timing import _pick
    from planner_app.service.resolve import default_attention

    seen = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_back is not None and _layer(frame.f_back.f_code.co_filename) == "core" \
                and _layer(frame.f_code.co_filename) in UPPER:
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        _pick(True, functools.partial(default_attention, "pytorch"), lambda: 0.0)
    except (TypeError, ValueError):
        pass  # _pick wants a number back; the call has happened by then
    finally:
        sys.setprofile(None)
    assert seen == ["default_attention"]
