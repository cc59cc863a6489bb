"""Helpers shared by the GUI tests (not a conftest: test modules import them)."""
from __future__ import annotations


def plan_shows_search_row(page, row: dict) -> bool:
    """The Plan page's latest estimate is the search row's layout, micro-batch and recomputation."""
    e = page.last_estimate
    return (e is not None and all(e["parallel"][k] == v for k, v in row["parallel"].items())
            and e["setup"]["micro_batch"] == row["micro_batch"] and e["setup"]["recompute"] == row["recompute"])


def cli_json(argv: list) -> dict:
    """What ``gpu-planner ARGV --json`` prints, run in this process."""
    import contextlib
    import io
    import json

    from planner_app.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(argv) + (["--json"] if "--json" not in argv else []))
    assert rc == 0, argv
    return json.loads(out.getvalue())
