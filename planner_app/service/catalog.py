"""The one way the faces open the spec database: the shipped catalog with the user's own
rows merged in (when their database opens; otherwise the shipped rows and a warning)."""
from __future__ import annotations

import sys

from planner_app.specdb.catalog import SpecDB, shipped_db


def open_catalog(userdb=None):
    """The spec database with ``userdb`` (default: the user's database) merged in."""
    try:
        # lazy: sqlite3 is optional (a Python built without it gets the shipped rows)
        from planner_app.specdb.userdb import UserDB, UserDBError
    except ImportError:
        return shipped_db()
    try:
        udb = userdb if userdb is not None else UserDB.open_default()
    except UserDBError as e:
        print(f"gpu-planner: warning: your database was not used: {e}", file=sys.stderr)
        return shipped_db()
    db = SpecDB(user_db=udb)
    for line in db.user_problems:
        print(f"gpu-planner: warning: {line}", file=sys.stderr)
    return db
