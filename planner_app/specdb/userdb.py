"""The user's own database: custom GPUs, instances, fabrics and models, price overrides,
probe results and calibration profiles, real-run validations. SQLite in the platform's
data directory, WAL journal, one transaction per write, schema versioned with
``PRAGMA user_version`` and migrated forward; never the shipped files.

A database that cannot be read (corrupted, or written by a newer version of the app) is
left untouched and reported in one clear message: nothing is overwritten or lost. So is one
that cannot be written (a read-only folder, a full disk, a lock held too long): the message
says which. A stored row that no longer reads (invalid JSON, a value the schema refuses) is
kept in the file, skipped, and listed in ``problems`` with the database and the row.

Several processes may open a new database at once (the app and a CLI on first run): each
migration step runs under an exclusive lock and re-reads the version inside it, so exactly
one of them applies it.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time

from planner_app.paths import user_data_dir
from planner_app.specdb.schema import FILES, SpecDataError, parse_cell

SCHEMA_VERSION = 2
DB_NAME = "planner.sqlite"

_ROW_TABLES = {"gpus": "custom_gpus", "instances": "custom_instances", "fabrics": "custom_fabrics",
               "models": "custom_models"}

# Each migration takes the database from version i to i + 1.
MIGRATIONS = {
    0: """
        CREATE TABLE custom_gpus (id TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE custom_instances (key TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE custom_fabrics (id TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE custom_models (id TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE price_overrides (key TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE probe_profiles (name TEXT PRIMARY KEY, gpu_id TEXT, device TEXT, created TEXT NOT NULL,
                                     result_json TEXT NOT NULL);
    """,
    1: """
        CREATE TABLE validation_runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created TEXT NOT NULL,
                                      gpu TEXT, recipe TEXT, model TEXT, measured_json TEXT NOT NULL,
                                      estimate_json TEXT NOT NULL, peak_gap REAL, step_gap REAL);
        CREATE TABLE collective_results (id INTEGER PRIMARY KEY AUTOINCREMENT, created TEXT NOT NULL,
                                         name TEXT, result_json TEXT NOT NULL);
    """,
}


class UserDBError(RuntimeError):
    """The user's database cannot be used; the message says why and what was kept."""


OPEN_WAIT_S = 15.0  # how long opening waits for another process's lock (first run: several at once)


class _Busy(Exception):
    def __init__(self, error):
        self.error = error


def _is_busy(e: sqlite3.Error) -> bool:
    text = str(e).lower()
    return "locked" in text or "busy" in text


def _explain(path: str, e: sqlite3.Error, doing: str) -> str:
    """One line for an SQLite failure: which database, what went wrong, what was kept."""
    text = str(e).lower()
    if "readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text:
        why = "cannot be written (read-only file or folder?)"
    elif "locked" in text or "busy" in text:
        why = "is locked by another program (another copy of the app?); try again"
    elif "full" in text or "disk i/o" in text:
        why = "cannot be written: the disk is full or failing"
    else:
        why = f"failed ({e})"
    return f"{path} {why} while {doing}; nothing in it was changed"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


class UserDB:
    """Open (creating or migrating) the database at ``path``."""

    def __init__(self, path: str):
        self.path = path
        self.problems: list[str] = []  # stored rows that were skipped, one line each
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        except OSError as e:
            raise UserDBError(f"the folder of {path} cannot be created ({e.strerror or e})") from None
        # Another process creating or migrating the same new database holds its lock for a
        # moment; switching to WAL does not wait on SQLite's busy handler, so retry a while.
        deadline = time.monotonic() + OPEN_WAIT_S
        while True:
            try:
                self._open(path)
                return
            except _Busy as e:
                if time.monotonic() > deadline:
                    raise UserDBError(_explain(path, e.error, "opening it")) from None
                time.sleep(0.02)

    def _open(self, path: str) -> None:
        if os.path.exists(path):
            self._check_readable(path)
        try:
            self.conn = sqlite3.connect(path, timeout=10, isolation_level=None)
        except sqlite3.Error as e:
            raise UserDBError(_explain(path, e, "opening it")) from None
        try:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise UserDBError(f"{path} was written by a newer version of the app (schema {version}, this "
                                  f"version reads up to {SCHEMA_VERSION}); it was not changed: update the app to "
                                  "use it")
            self._migrate(version)
        except UserDBError:
            self.conn.close()
            raise
        except sqlite3.OperationalError as e:
            self.conn.close()
            if _is_busy(e):
                raise _Busy(e) from None
            raise UserDBError(_explain(path, e, "opening it")) from None
        except sqlite3.DatabaseError as e:
            self.conn.close()
            raise UserDBError(f"{path} is not a readable database ({e}); it was left as it is: move it away "
                              "to start a new one") from None

    @classmethod
    def open_default(cls) -> UserDB:
        return cls(os.path.join(user_data_dir(), DB_NAME))

    @staticmethod
    def _check_readable(path: str) -> None:
        try:
            with open(path, "rb") as f:
                head = f.read(16)
        except OSError as e:
            raise UserDBError(f"{path} cannot be read ({e.strerror or e}); it was left as it is") from None
        if head and head != b"SQLite format 3\x00":
            raise UserDBError(f"{path} is not an SQLite database (corrupted?); it was left as it is: move it "
                              "away to start a new one")
        try:
            c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                ok = c.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                c.close()
        except sqlite3.OperationalError as e:  # locked, or a file we may not read: not corruption
            if _is_busy(e):
                raise _Busy(e) from None
            raise UserDBError(_explain(path, e, "checking it")) from None
        except sqlite3.DatabaseError as e:
            raise UserDBError(f"{path} is corrupted ({e}); it was left as it is: move it away to start a new "
                              "one") from None
        if ok != "ok":
            raise UserDBError(f"{path} failed its integrity check ({ok}); it was left as it is")

    def _migrate(self, version: int) -> None:
        """Each step under an exclusive lock, with the version read again inside it: another
        process may have migrated between our first read and the lock (first run of the app
        and a CLI at once once failed with "table custom_gpus already exists")."""
        while version < SCHEMA_VERSION:
            self.conn.execute("BEGIN EXCLUSIVE")
            try:
                version = self.conn.execute("PRAGMA user_version").fetchone()[0]
                if version >= SCHEMA_VERSION:
                    self.conn.execute("COMMIT")
                    break
                for stmt in [s for s in MIGRATIONS[version].split(";") if s.strip()]:
                    self.conn.execute(stmt)
                self.conn.execute(f"PRAGMA user_version = {version + 1}")
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            version += 1

    def close(self) -> None:
        self.conn.close()

    # ---- custom rows --------------------------------------------------------------------
    @staticmethod
    def _key(kind: str, row: dict) -> str:
        if kind == "instances":
            return f"{row['provider']}:{row['region']}:{row['instance_id']}"
        return row["id"]

    def validate_row(self, kind: str, raw: dict) -> dict:
        """Check a user row against the shipped schema; errors name the field."""
        cols = FILES[kind]
        names = {c.name for c in cols}
        unknown = [k for k in raw if k not in names]
        if unknown:
            raise SpecDataError(f"your {kind}", None, unknown[0], "is not a known column")
        return {c.name: parse_cell(c, "" if raw.get(c.name) is None else str(raw.get(c.name)), f"your {kind}", None)
                for c in cols}

    def upsert(self, kind: str, raw: dict) -> dict:
        row = self.validate_row(kind, raw)
        table = _ROW_TABLES[kind]
        keycol = "key" if kind == "instances" else "id"
        with self._tx():
            self.conn.execute(f"INSERT OR REPLACE INTO {table} ({keycol}, row_json, updated) VALUES (?, ?, ?)",
                              (self._key(kind, row), json.dumps(row), _now()))
        return row

    def upsert_many(self, kind: str, rows) -> int:
        """Save already-validated rows in one transaction: all of them or, on any failure
        (or a crash part-way), none."""
        table = _ROW_TABLES[kind]
        keycol = "key" if kind == "instances" else "id"
        n = 0
        with self._tx():
            for row in rows:
                self.conn.execute(f"INSERT OR REPLACE INTO {table} ({keycol}, row_json, updated) VALUES (?, ?, ?)",
                                  (self._key(kind, row), json.dumps(row), _now()))
                n += 1
        return n

    def delete(self, kind: str, key: str) -> None:
        table = _ROW_TABLES[kind]
        keycol = "key" if kind == "instances" else "id"
        with self._tx():
            self.conn.execute(f"DELETE FROM {table} WHERE {keycol} = ?", (key,))

    def _flag(self, what: str, problem: str) -> None:
        line = f"{self.path}: {what} {problem}; it is kept in the database and skipped"
        if line not in self.problems:
            self.problems.append(line)

    def _decode(self, what: str, text):
        """A stored JSON object, or None (flagged) when it does not read as one."""
        try:
            value = json.loads(text)
        except (TypeError, ValueError, RecursionError) as e:
            self._flag(what, f"is not valid JSON ({str(e)[:80]})")
            return None
        if not isinstance(value, dict):
            self._flag(what, "is not a JSON object")
            return None
        return value

    def rows(self, kind: str) -> list[dict]:
        """The user's rows of ``kind`` that still pass the schema; the others are flagged."""
        table = _ROW_TABLES[kind]
        keycol = "key" if kind == "instances" else "id"
        out = []
        for key, text in self.conn.execute(f"SELECT {keycol}, row_json FROM {table} ORDER BY rowid"):
            what = f"your {kind[:-1]} {key!r}"
            row = self._decode(what, text)
            if row is None:
                continue
            try:
                out.append(self.validate_row(kind, row))
            except SpecDataError as e:
                self._flag(what, f"has a bad {e.column or 'value'} ({e.message})")
        return out

    def set_price_override(self, provider: str, region: str, instance_id: str, **prices) -> None:
        allowed = {"price_on_demand_hr", "price_1yr_hr", "price_3yr_hr", "price_spot_hr", "currency", "price_date"}
        bad = [k for k in prices if k not in allowed]
        if bad:
            raise SpecDataError("your price override", None, bad[0], f"is not a price field ({', '.join(sorted(allowed))})")
        row = {"provider": provider, "region": region, "instance_id": instance_id, **prices}
        with self._tx():
            self.conn.execute("INSERT OR REPLACE INTO price_overrides (key, row_json, updated) VALUES (?, ?, ?)",
                              (f"{provider}:{region}:{instance_id}", json.dumps(row), _now()))

    def price_overrides(self) -> list[dict]:
        out = []
        for key, text in self.conn.execute("SELECT key, row_json FROM price_overrides ORDER BY rowid"):
            row = self._decode(f"your price override {key!r}", text)
            if row is not None and all(isinstance(row.get(k), str) for k in ("provider", "region", "instance_id")):
                out.append(row)
            elif row is not None:
                self._flag(f"your price override {key!r}", "names no instance")
        return out

    # ---- probe results ------------------------------------------------------------------
    def save_profile(self, name: str, result: dict, gpu_id: str | None = None, device: str | None = None) -> None:
        if not name or not name.strip():
            raise SpecDataError("calibration profile", None, "name", "must not be empty")
        with self._tx():
            self.conn.execute("INSERT OR REPLACE INTO probe_profiles (name, gpu_id, device, created, result_json) "
                              "VALUES (?, ?, ?, ?, ?)", (name.strip(), gpu_id, device, _now(), json.dumps(result)))

    def profiles(self) -> list[dict]:
        rows = self.conn.execute("SELECT name, gpu_id, device, created, result_json FROM probe_profiles ORDER BY created")
        out = []
        for n, g, d, c, r in rows:
            result = self._decode(f"calibration profile {n!r}", r)
            if result is not None:
                out.append({"name": n, "gpu_id": g, "device": d, "created": c, "result": result})
        return out

    def profile(self, name: str) -> dict | None:
        for p in self.profiles():
            if p["name"] == name:
                return p
        return None

    def delete_profile(self, name: str) -> None:
        with self._tx():
            self.conn.execute("DELETE FROM probe_profiles WHERE name = ?", (name,))

    def add_validation(self, gpu: str, recipe: str, model: str, measured: dict, estimate: dict,
                       peak_gap: float | None, step_gap: float | None) -> None:
        with self._tx():
            self.conn.execute("INSERT INTO validation_runs (created, gpu, recipe, model, measured_json, estimate_json, "
                              "peak_gap, step_gap) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                              (_now(), gpu, recipe, model, json.dumps(measured), json.dumps(estimate), peak_gap,
                               step_gap))

    def validations(self, gpu: str | None = None) -> list[dict]:
        q = "SELECT created, gpu, recipe, model, measured_json, estimate_json, peak_gap, step_gap FROM validation_runs"
        rows = self.conn.execute(q + (" WHERE gpu = ?" if gpu else "") + " ORDER BY id", (gpu,) if gpu else ())
        out = []
        for c, g, r, m, a, b, pg, sg in rows:
            measured, est = self._decode(f"validation run of {c}", a), self._decode(f"validation run of {c}", b)
            if measured is not None and est is not None:
                out.append({"created": c, "gpu": g, "recipe": r, "model": m, "measured": measured, "estimate": est,
                            "peak_gap": pg, "step_gap": sg})
        return out

    def add_collectives(self, name: str, result: dict) -> None:
        with self._tx():
            self.conn.execute("INSERT INTO collective_results (created, name, result_json) VALUES (?, ?, ?)",
                              (_now(), name, json.dumps(result)))

    def collectives(self) -> list[dict]:
        rows = self.conn.execute("SELECT created, name, result_json FROM collective_results ORDER BY id")
        out = []
        for c, n, r in rows:
            result = self._decode(f"collective result {n!r} of {c}", r)
            if result is not None:
                out.append({"created": c, "name": n, "result": result})
        return out

    # ---- transactions -------------------------------------------------------------------
    def _tx(self):
        """One write transaction; an SQLite failure (read-only, locked, full) becomes one
        UserDBError line, and the transaction is rolled back (nothing half-written)."""
        conn, path = self.conn, self.path

        class _T:
            def __enter__(self_inner):
                try:
                    conn.execute("BEGIN IMMEDIATE")
                except sqlite3.Error as e:
                    raise UserDBError(_explain(path, e, "saving")) from None

            def __exit__(self_inner, exc_type, exc, tb):
                if exc_type is None:
                    try:
                        conn.execute("COMMIT")
                        return False
                    except sqlite3.Error as e:
                        exc_type, exc = type(e), e
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise UserDBError(_explain(path, exc, "saving")) from None
                return False
        return _T()
