"""The user's own database: custom GPUs, instances, fabrics and models, price overrides,
probe results and calibration profiles, real-run validations. SQLite in the platform's
data directory, WAL journal, one transaction per write, schema versioned with
``PRAGMA user_version`` and migrated forward; never the shipped files.

A database that cannot be read (corrupted, or written by a newer version of the app) is
left untouched and reported in one clear message: nothing is overwritten or lost.
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


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


class UserDB:
    """Open (creating or migrating) the database at ``path``."""

    def __init__(self, path: str):
        self.path = path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        if os.path.exists(path):
            self._check_readable(path)
        try:
            self.conn = sqlite3.connect(path, timeout=10, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise UserDBError(f"{path} is not a readable database ({e}); it was left as it is: move it away "
                              "to start a new one") from None
        if version > SCHEMA_VERSION:
            self.conn.close()
            raise UserDBError(f"{path} was written by a newer version of the app (schema {version}, this version "
                              f"reads up to {SCHEMA_VERSION}); it was not changed: update the app to use it")
        self._migrate(version)

    @classmethod
    def open_default(cls) -> "UserDB":
        return cls(os.path.join(user_data_dir(), DB_NAME))

    @staticmethod
    def _check_readable(path: str) -> None:
        with open(path, "rb") as f:
            head = f.read(16)
        if head and head != b"SQLite format 3\x00":
            raise UserDBError(f"{path} is not an SQLite database (corrupted?); it was left as it is: move it "
                              "away to start a new one")
        try:
            c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                ok = c.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                c.close()
        except sqlite3.DatabaseError as e:
            raise UserDBError(f"{path} is corrupted ({e}); it was left as it is: move it away to start a new "
                              "one") from None
        if ok != "ok":
            raise UserDBError(f"{path} failed its integrity check ({ok}); it was left as it is")

    def _migrate(self, version: int) -> None:
        while version < SCHEMA_VERSION:
            script = MIGRATIONS[version]
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                for stmt in [s for s in script.split(";") if s.strip()]:
                    self.conn.execute(stmt)
                self.conn.execute(f"PRAGMA user_version = {version + 1}")
                self.conn.execute("COMMIT")
            except sqlite3.DatabaseError:
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

    def rows(self, kind: str) -> list[dict]:
        table = _ROW_TABLES[kind]
        return [json.loads(r[0]) for r in self.conn.execute(f"SELECT row_json FROM {table} ORDER BY rowid")]

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
        return [json.loads(r[0]) for r in self.conn.execute("SELECT row_json FROM price_overrides")]

    # ---- probe results ------------------------------------------------------------------
    def save_profile(self, name: str, result: dict, gpu_id: str | None = None, device: str | None = None) -> None:
        if not name or not name.strip():
            raise SpecDataError("calibration profile", None, "name", "must not be empty")
        with self._tx():
            self.conn.execute("INSERT OR REPLACE INTO probe_profiles (name, gpu_id, device, created, result_json) "
                              "VALUES (?, ?, ?, ?, ?)", (name.strip(), gpu_id, device, _now(), json.dumps(result)))

    def profiles(self) -> list[dict]:
        rows = self.conn.execute("SELECT name, gpu_id, device, created, result_json FROM probe_profiles ORDER BY created")
        return [{"name": n, "gpu_id": g, "device": d, "created": c, "result": json.loads(r)} for n, g, d, c, r in rows]

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
        return [{"created": c, "gpu": g, "recipe": r, "model": m, "measured": json.loads(a), "estimate": json.loads(b),
                 "peak_gap": pg, "step_gap": sg} for c, g, r, m, a, b, pg, sg in rows]

    def add_collectives(self, name: str, result: dict) -> None:
        with self._tx():
            self.conn.execute("INSERT INTO collective_results (created, name, result_json) VALUES (?, ?, ?)",
                              (_now(), name, json.dumps(result)))

    def collectives(self) -> list[dict]:
        rows = self.conn.execute("SELECT created, name, result_json FROM collective_results ORDER BY id")
        return [{"created": c, "name": n, "result": json.loads(r)} for c, n, r in rows]

    # ---- transactions -------------------------------------------------------------------
    def _tx(self):
        conn = self.conn

        class _T:
            def __enter__(self_inner):
                conn.execute("BEGIN IMMEDIATE")

            def __exit__(self_inner, exc_type, exc, tb):
                conn.execute("ROLLBACK" if exc_type else "COMMIT")
                return False
        return _T()
