"""The shipped spec database and the user's database: rules, errors, imports, safety."""
import csv
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from planner_app.core.errors import InputError
from planner_app.paths import spec_data_dir
from planner_app.specdb.catalog import SpecDB
from planner_app.specdb.importers import export_csv, import_aws_describe_instance_types, import_csv, import_skypilot_vms
from planner_app.specdb.schema import DENSE_SPARSE_PAIRS, SpecDataError
from planner_app.specdb.userdb import SCHEMA_VERSION, UserDB, UserDBError

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


# ---- shipped data rules -------------------------------------------------------------------
def test_sizes(db):
    assert len(db.gpus) >= 30
    assert len(db.instances) >= 60
    assert db.instances.provider.nunique() >= 7
    assert len(db.fabrics) >= 20


def test_every_row_has_a_source_and_a_date(db):
    for kind in ("gpus", "instances", "fabrics", "models"):
        df = db.tables[kind]
        assert (df.source_url.str.len() > 0).all() and (df.retrieved.str.len() == 10).all(), kind


def test_dense_never_exceeds_sparse(db):
    for dense, sparse in DENSE_SPARSE_PAIRS:
        both = db.gpus[[dense, sparse]].dropna()
        assert (both[sparse] >= both[dense]).all(), dense


def test_units_in_range(db):
    g = db.gpus
    assert g.memory_gb.between(4, 512).all() and g.mem_bw_gb_s.between(100, 20000).all()
    assert (g.bf16_tflops.dropna() < 10000).all() and (g.tdp_w.dropna().between(30, 3000)).all()
    i = db.instances
    assert i.gpu_count.between(1, 72).all()
    priced = i.price_on_demand_hr.dropna()
    assert (priced > 0).all() and (priced < 1000).all()
    f = db.fabrics
    assert f.efficiency.between(0.05, 1).all() and f.latency_us.between(0.1, 200).all()


def test_no_duplicates_and_references_resolve(db):
    assert db.gpus.id.is_unique and db.fabrics.id.is_unique and db.models.id.is_unique
    assert not db.instances.duplicated(["provider", "region", "instance_id"]).any()
    assert set(db.instances.gpu_id) <= set(db.gpus.id)
    assert set(db.instances.intra_node_link) <= set(db.fabrics.id)


def test_contract_fabric_ids_exist(db):
    for fid in ("ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "roce-100", "roce-200", "roce-400", "efa", "eth-10",
                "eth-25", "eth-100"):
        assert db.fabric(fid).scope == "inter"


@pytest.mark.parametrize("name,want", [("h100 sxm", "h100-sxm"), ("H100-SXM5-80GB", "h100-sxm"),
                                       ("NVIDIA H200", "h200-sxm"), ("a100 80gb", "a100-sxm-80gb"),
                                       ("MI300X", "mi300x"), ("rtx 4090", "rtx-4090")])
def test_find_by_name(db, name, want):
    assert db.gpu(name).id == want


def test_ambiguous_and_unknown_names(db):
    with pytest.raises(InputError, match="ambiguous"):
        db.gpu("a100")
    with pytest.raises(InputError, match="unknown"):
        db.gpu("quantum accelerator")


def test_currency_conversion(db):
    from planner_app.core.plans.cost import hourly_prices_usd

    row = db.instances[db.instances.currency == "CNY"].dropna(subset=["price_on_demand_hr"]).iloc[0]
    inst = db.instance(f"{row.provider}:{row.region}:{row.instance_id}")
    usd = hourly_prices_usd(inst.prices, cny_per_usd=7.0)["on_demand"]
    assert usd == pytest.approx(row.price_on_demand_hr / 7.0)


# ---- corrupted shipped files ---------------------------------------------------------------
def _copy_spec(tmp_path):
    d = tmp_path / "spec_data"
    shutil.copytree(spec_data_dir(), d)
    return d


def _edit(path, line_no, column, value):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    col = rows[0].index(column)
    rows[line_no - 1][col] = value
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


@pytest.mark.parametrize("file,line,column,value,words", [
    ("gpus.csv", 5, "memory_gb", "eighty", "must be a number"),
    ("gpus.csv", 7, "bf16_sparse_tflops", "1", "below the dense"),
    ("gpus.csv", 3, "retrieved", "last year", "YYYY-MM-DD"),
    ("instances.csv", 10, "gpu_id", "tpu-v9", "not a GPU id"),
    ("fabrics.csv", 4, "efficiency", "1.7", "at most 1"),
    ("gpus.csv", 9, "id", "h100-sxm", "duplicates line"),
])
def test_corrupted_csv_names_file_line_and_column(tmp_path, file, line, column, value, words):
    d = _copy_spec(tmp_path)
    _edit(d / file, line, column, value)
    with pytest.raises(SpecDataError) as e:
        SpecDB(str(d))
    msg = str(e.value)
    assert file in msg and f"line {line}" in msg and words in msg, msg


def test_truncated_csv_is_reported(tmp_path):
    d = _copy_spec(tmp_path)
    with open(d / "gpus.csv", "a", encoding="utf-8") as f:
        f.write('broken,"unterminated\n')
    with pytest.raises(SpecDataError) as e:
        SpecDB(str(d))
    assert "gpus.csv" in str(e.value)


# ---- the user's database ---------------------------------------------------------------------
CUSTOM_GPU = {"id": "my-card", "vendor": "NVIDIA", "name": "My Card", "aliases": "", "form_factor": "PCIe",
              "memory_gb": 48, "memory_type": "GDDR6", "mem_bw_gb_s": 900, "bf16_tflops": 180, "fp16_tflops": 180,
              "tdp_w": 300, "link": "none", "link_bw_gb_s": 0, "pcie_gen": 4, "pcie_lanes": 16, "year": 2026,
              "source_url": "measured in our lab", "retrieved": "2026-12-01", "notes": ""}


def test_user_rows_extend_and_override_without_touching_shipped_files(tmp_path):
    shipped = os.path.join(spec_data_dir(), "gpus.csv")
    before = hashlib.sha256(Path(shipped).read_bytes()).hexdigest()
    u = UserDB(str(tmp_path / "u.sqlite"))
    u.upsert("gpus", CUSTOM_GPU)
    u.upsert("gpus", dict(CUSTOM_GPU, id="h100-sxm", name="H100 SXM", memory_gb=96, mem_bw_gb_s=3350))
    db = SpecDB(user_db=u)
    assert db.gpu("my card").memory_gb == 48
    assert db.gpu("h100-sxm").memory_gb == 96  # the user's row wins
    assert hashlib.sha256(Path(shipped).read_bytes()).hexdigest() == before
    u.set_price_override("AWS", "us-east-1", "p5.48xlarge", price_on_demand_hr=40.0, price_date="2026-12-01")
    db = SpecDB(user_db=u)
    assert db.instance("p5.48xlarge").prices.on_demand == 40.0


def test_user_rows_are_validated(tmp_path):
    u = UserDB(str(tmp_path / "u.sqlite"))
    with pytest.raises(SpecDataError) as e:
        u.upsert("gpus", dict(CUSTOM_GPU, memory_gb=-3))
    assert e.value.column == "memory_gb"


def test_schema_version_and_wal(tmp_path):
    p = str(tmp_path / "u.sqlite")
    UserDB(p).close()
    c = sqlite3.connect(p)
    assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    c.close()


def test_older_database_is_migrated(tmp_path):
    p = str(tmp_path / "u.sqlite")
    c = sqlite3.connect(p)
    c.executescript(textwrap.dedent("""
        CREATE TABLE custom_gpus (id TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE custom_instances (key TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE custom_fabrics (id TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE custom_models (id TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE price_overrides (key TEXT PRIMARY KEY, row_json TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE probe_profiles (name TEXT PRIMARY KEY, gpu_id TEXT, device TEXT, created TEXT NOT NULL,
                                     result_json TEXT NOT NULL);
        PRAGMA user_version = 1;
    """))
    c.execute("INSERT INTO custom_gpus VALUES (?, ?, ?)", ("my-card", json.dumps(CUSTOM_GPU), "2026-01-01"))
    c.commit()
    c.close()
    u = UserDB(p)
    assert u.rows("gpus")[0]["id"] == "my-card"  # kept
    u.add_validation("h100-sxm", "bf16", "gpt2", {}, {}, 0.01, -0.02)  # the new table exists
    assert len(u.validations()) == 1


def test_newer_database_is_refused_and_left_alone(tmp_path):
    p = str(tmp_path / "u.sqlite")
    u = UserDB(p)
    u.upsert("gpus", CUSTOM_GPU)
    u.close()
    c = sqlite3.connect(p)
    c.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    c.commit()
    c.close()
    before = Path(p).read_bytes()
    with pytest.raises(UserDBError, match="newer version"):
        UserDB(p)
    assert Path(p).read_bytes() == before


def test_corrupted_database_is_refused_and_left_alone(tmp_path):
    p = tmp_path / "u.sqlite"
    p.write_bytes(b"this is not a database" * 100)
    before = p.read_bytes()
    with pytest.raises(UserDBError, match="not an SQLite database"):
        UserDB(str(p))
    assert p.read_bytes() == before


def test_damaged_pages_are_reported(tmp_path):
    p = str(tmp_path / "u.sqlite")
    u = UserDB(p)
    u.upsert_many("gpus", [dict(u.validate_row("gpus", dict(CUSTOM_GPU, id=f"card-{i}"))) for i in range(300)])
    u.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    u.close()
    data = bytearray(Path(p).read_bytes())
    for i in range(4096, min(len(data), 4096 * 6)):
        data[i] = (data[i] * 7 + 13) % 256
    Path(p).write_bytes(bytes(data))
    with pytest.raises(UserDBError):
        UserDB(p)


def test_crash_in_the_middle_of_a_write_loses_nothing(tmp_path):
    p = str(tmp_path / "u.sqlite")
    u = UserDB(p)
    u.upsert("gpus", CUSTOM_GPU)
    u.close()
    script = textwrap.dedent(f"""
        import os
        from planner_app.specdb.userdb import UserDB
        u = UserDB({p!r})
        base = {CUSTOM_GPU!r}
        def rows():
            for i in range(100):
                if i == 50:
                    os._exit(9)  # the process dies half-way through the transaction
                yield u.validate_row("gpus", dict(base, id=f"crash-{{i}}"))
        u.upsert_many("gpus", rows())
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 9, r.stderr
    u = UserDB(p)
    ids = [row["id"] for row in u.rows("gpus")]
    assert ids == ["my-card"]  # the earlier row survives, no partial import


def test_csv_import_is_all_or_nothing(tmp_path):
    u = UserDB(str(tmp_path / "u.sqlite"))
    good = tmp_path / "good.csv"
    export_csv([u.validate_row("gpus", dict(CUSTOM_GPU, id=f"card-{i}")) for i in range(3)], "gpus", str(good))
    assert import_csv(u, "gpus", str(good)) == 3
    bad = tmp_path / "bad.csv"
    text = good.read_text().replace("card-2,", "card-9,").replace(",48.0,", ",-48.0,", 1)
    bad.write_text(text)
    with pytest.raises(SpecDataError) as e:
        import_csv(u, "gpus", str(bad))
    assert "line 2" in str(e.value) and e.value.column == "memory_gb"
    assert sorted(r["id"] for r in u.rows("gpus")) == ["card-0", "card-1", "card-2"]


def test_export_is_atomic_on_an_unwritable_path(tmp_path):
    with pytest.raises(OSError):
        export_csv([], "gpus", str(tmp_path / "missing-dir" / "x.csv"))
    assert not any(n.startswith(".tmp-") for n in os.listdir(tmp_path))


def test_import_skypilot_vms(db, tmp_path):
    p = tmp_path / "vms.csv"
    p.write_text("InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,"
                 "Price,SpotPrice,Arch\n"
                 'p5.48xlarge,192,2048,H100,8,"{""Gpus"": [{""Name"": ""H100"", ""MemoryInfo"": {""SizeInMiB"": '
                 '81920}}]}",us-east-1,us-east-1a,55.04,16.95,x86_64\n'
                 'p5.48xlarge,192,2048,H100,8,,us-west-2,us-west-2a,60.00,,x86_64\n'
                 'weird.large,4,16,TPU-v9,1,,us-east-1,us-east-1a,1.0,,x86_64\n'
                 'm5.large,2,8,,,,us-east-1,us-east-1a,0.1,,x86_64\n')
    rows, skipped = import_skypilot_vms(db, str(p), "AWS")
    assert [r["instance_id"] for r in rows] == ["p5.48xlarge"]
    assert rows[0]["gpu_id"] == "h100-sxm" and rows[0]["price_on_demand_hr"] == 55.04
    assert skipped and "TPU-v9" in skipped[0]
    u = UserDB(str(tmp_path / "u.sqlite"))
    u.upsert_many("instances", [u.validate_row("instances", r) for r in rows])
    assert SpecDB(user_db=u).instance("AWS:us-east-1:p5.48xlarge").prices.spot == 16.95


def test_import_aws_describe_instance_types(db, tmp_path):
    p = tmp_path / "types.json"
    p.write_text(json.dumps({"InstanceTypes": [
        {"InstanceType": "p4d.24xlarge", "VCpuInfo": {"DefaultVCpus": 96}, "MemoryInfo": {"SizeInMiB": 1179648},
         "GpuInfo": {"Gpus": [{"Name": "A100", "Manufacturer": "NVIDIA", "Count": 8,
                               "MemoryInfo": {"SizeInMiB": 40960}}]},
         "NetworkInfo": {"NetworkPerformance": "400 Gigabit", "EfaSupported": True, "MaximumNetworkCards": 4},
         "InstanceStorageInfo": {"TotalSizeInGB": 8000}},
        {"InstanceType": "c5.large", "VCpuInfo": {"DefaultVCpus": 2}}]}))
    rows, skipped = import_aws_describe_instance_types(db, str(p))
    assert len(rows) == 1 and rows[0]["gpu_id"] == "a100-sxm-40gb" and rows[0]["network_gbit_s"] == 400.0
    with pytest.raises(SpecDataError, match="InstanceTypes"):
        (tmp_path / "x.json").write_text("[]")
        import_aws_describe_instance_types(db, str(tmp_path / "x.json"))
