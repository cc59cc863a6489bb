"""The user's database (issue 16): first-run migration race, read-only / locked / full
cases as one line with nothing lost, stored rows that no longer read or do not match the
catalog kept, flagged and skipped."""
import csv
import multiprocessing
import os
import sqlite3
import sys
import time

import pytest

from planner_app.specdb import importers
from planner_app.specdb.catalog import SpecDB
from planner_app.specdb.userdb import DB_NAME, SCHEMA_VERSION, UserDB, UserDBError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _open_at(path, start_at, queue):
    while time.time() < start_at:  # every process opens the new database at the same moment
        time.sleep(0.001)
    try:
        db = UserDB(path)
        db.save_profile(f"p{os.getpid()}", {"x": 1})
        db.close()
        queue.put("ok")
    except Exception as e:  # noqa: BLE001 - reported to the test
        queue.put(f"{type(e).__name__}: {e}")


@pytest.mark.parametrize("round_", range(3))
def test_several_processes_on_an_empty_folder_all_open_the_database(tmp_path, round_):
    path = str(tmp_path / "fresh" / DB_NAME)
    ctx = multiprocessing.get_context("spawn" if sys.platform == "win32" else "fork")
    q = ctx.Queue()
    n = 6
    start_at = time.time() + 1.0
    ps = [ctx.Process(target=_open_at, args=(path, start_at, q)) for _ in range(n)]
    for p in ps:
        p.start()
    got = [q.get(timeout=60) for _ in range(n)]
    for p in ps:
        p.join(timeout=30)
    assert got == ["ok"] * n
    db = UserDB(path)
    assert db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert len(db.profiles()) == n  # every process's write landed


def test_the_migration_rechecks_the_version_under_its_lock(tmp_path):
    """Two connections read version 0; the second to take the lock finds the first's work
    done and applies nothing (the old code ran CREATE TABLE again and crashed)."""
    path = str(tmp_path / DB_NAME)
    first = UserDB(path)
    second = UserDB.__new__(UserDB)
    second.path, second.problems = path, []
    second.conn = sqlite3.connect(path, isolation_level=None)
    second._migrate(0)  # as if it had read user_version before the first migrated
    assert second.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    first.close()
    second.close()


def _ro(db):
    db.conn.close()
    db.conn = sqlite3.connect(f"file:{db.path}?mode=ro", uri=True, isolation_level=None)


def _locked(db):
    other = sqlite3.connect(db.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    db.conn.execute("PRAGMA busy_timeout = 50")
    db._other = other


def _full(db):
    pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
    db.conn.execute(f"PRAGMA max_page_count = {pages}")


@pytest.mark.parametrize("make, words", [(_ro, "cannot be written"), (_locked, "locked"), (_full, "disk is full")])
def test_read_only_locked_and_full_are_one_line_and_lose_nothing(tmp_path, make, words):
    db = UserDB(str(tmp_path / DB_NAME))
    db.save_profile("kept", {"bench": {"a": 1}})
    make(db)
    with pytest.raises(UserDBError) as e:
        db.save_profile("new", {"blob": "x" * 200_000})
    msg = str(e.value)
    assert words in msg and db.path in msg and "\n" not in msg and "nothing in it was changed" in msg
    assert not db.conn.in_transaction
    check = UserDB(db.path) if make is not _locked else None
    if check is not None:
        assert [p["name"] for p in check.profiles()] == ["kept"]


def test_a_failing_write_in_a_command_is_one_line(user_dir, cli, monkeypatch):
    def refuse(self, *a, **k):
        raise UserDBError(f"{self.path} cannot be written (read-only file or folder?) while saving; nothing in it "
                          "was changed")
    monkeypatch.setattr(UserDB, "add_collectives", refuse)
    rc, out, err = cli(["cluster", "import", os.path.join(ROOT, "tests", "data", "collectives_h200x2.json"),
                        "--profile", "x"])
    assert rc == 2 and "your database" in err and len(err.strip().splitlines()) == 1


def test_an_unwritable_folder_falls_back_to_the_shipped_catalog(tmp_path, monkeypatch, cli):
    """Opening fails as SQLite fails in a read-only folder: one warning, the estimate runs."""
    real = sqlite3.connect

    def connect(path, *a, **k):
        if str(path).endswith(DB_NAME):
            raise sqlite3.OperationalError("unable to open database file")
        return real(path, *a, **k)
    monkeypatch.setenv("PLANNER_USER_DIR", str(tmp_path))
    monkeypatch.setattr(sqlite3, "connect", connect)
    rc, out, err = cli(["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--json"])
    assert rc == 0 and "read-only" in err and "corrupted" not in err
    assert len(err.strip().splitlines()) == 1


# ---- stored rows that do not read or do not match the catalog ----------------------------
def _instance_row(**changes):
    with open(os.path.join(ROOT, "spec_data", "instances.csv"), newline="") as f:
        row = next(csv.DictReader(f))
    row.update(instance_id="my.box", **changes)
    return row


@pytest.mark.parametrize("changes, column", [({"gpu_id": "no-such-gpu"}, "gpu_id"),
                                             ({"fabric_id": "no-such-net"}, "fabric_id"),
                                             ({"intra_node_link": "warp-drive"}, "intra_node_link")])
def test_a_user_instance_of_an_unknown_gpu_is_kept_flagged_and_skipped(user_dir, cli, tmp_path, changes, column):
    row = _instance_row(**changes)
    path = tmp_path / "mine.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    udb = UserDB.open_default()
    assert importers.import_csv(udb, "instances", str(path)) == 1
    rc, out, err = cli(["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--json"])
    assert rc == 0, err  # every command used to exit 2 blaming spec_data/instances.csv
    assert str(user_dir / DB_NAME) in err and "my.box" in err and column in err and "skipped" in err
    assert "instances.csv" not in err
    rc, out, err = cli(["specs", "instances", "--json"])
    assert rc == 0 and "my.box" not in out
    assert len(UserDB.open_default().rows("instances")) == 1  # kept in the database


def test_a_bad_user_row_leaves_the_shipped_row_of_its_key(user_dir):
    with open(os.path.join(ROOT, "spec_data", "instances.csv"), newline="") as f:
        row = next(csv.DictReader(f))
    shipped_id = row["instance_id"]
    row["gpu_id"] = "no-such-gpu"
    udb = UserDB.open_default()
    udb.upsert("instances", row)
    db = SpecDB(user_db=udb)
    assert db.instance(shipped_id).gpu_id != "no-such-gpu"
    assert any(shipped_id in p for p in db.user_problems)


@pytest.mark.parametrize("table, key, text, command", [
    ("custom_gpus", "id", "{not json", ["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm"]),
    ("custom_models", "id", "[1, 2]", ["specs", "fabrics"]),
    ("custom_gpus", "id", '{"id": "x", "memory_gb": "lots"}', ["specs", "gpus"]),
    ("price_overrides", "key", "{oops", ["specs", "instances"]),
])
def test_one_stored_row_with_invalid_json_breaks_nothing(user_dir, cli, table, key, text, command):
    udb = UserDB.open_default()
    udb.conn.execute(f"INSERT INTO {table} ({key}, row_json, updated) VALUES ('broken', ?, 'now')", (text,))
    rc, out, err = cli(command)
    assert rc == 0, err
    assert "broken" in err and str(user_dir / DB_NAME) in err and "Traceback" not in err


def test_a_damaged_calibration_profile_is_one_line(user_dir, cli):
    udb = UserDB.open_default()
    udb.conn.execute("INSERT INTO probe_profiles VALUES ('bad', 'h100-sxm', 'd', 'now', '{nope')")
    rc, out, err = cli(["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--calibration", "bad"])
    assert rc == 2 and "--calibration" in err and "not valid JSON" in err
    assert len(err.strip().splitlines()) == 1
