"""Calibration profiles as every estimate uses them: a saved profile (probe/calibration.py) with the
never-worse rule applied against the validated runs stored for its GPU (``guard_profile``: a
profile is kept only as far as it does not make those runs' estimates worse)."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace

from planner_app.probe.calibration import (
    CalibrationProfile,
    guard_profile,
    read_profile,
)
from planner_app.service.validation import validated_cases
from planner_app.specdb.catalog import shipped_db

# The rule re-estimates every stored run ~20 times: once per profile and set of runs, for as many
# profiles as a session uses (a handful)
GUARDED_PROFILES = 32
_GUARDED: OrderedDict = OrderedDict()


def load_calibration(name: str | None, db=None, userdb=None, guard: bool = True) -> CalibrationProfile | None:
    """The saved profile ``name`` (None: none) from the user's database (``userdb``, default the
    user's own), its GPU looked up in ``db`` (default the shipped catalog), guarded."""
    if not name:
        return None
    db = db if db is not None else shipped_db()
    profile, gpu, runs, key = read_profile(name, userdb=userdb, specdb=db)
    if not guard:
        return profile
    if key not in _GUARDED:
        _GUARDED[key] = guard_profile(profile, gpu, validated_cases(db, runs, gpu) if runs else [])
        while len(_GUARDED) > GUARDED_PROFILES:
            _GUARDED.popitem(last=False)
    _GUARDED.move_to_end(key)
    return replace(_GUARDED[key])
