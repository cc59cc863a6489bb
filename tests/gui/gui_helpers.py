"""Helpers shared by the GUI tests (not a conftest: test modules import them)."""
from __future__ import annotations


def plan_shows_search_row(page, row: dict) -> bool:
    """The Plan page's latest estimate is the search row's layout, micro-batch and recomputation."""
    e = page.last_estimate
    return (e is not None and all(e["parallel"][k] == v for k, v in row["parallel"].items())
            and e["setup"]["micro_batch"] == row["micro_batch"] and e["setup"]["recompute"] == row["recompute"])
