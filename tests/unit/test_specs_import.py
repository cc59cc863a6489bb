"""``gpu-planner specs import``: a SkyPilot vms.csv refreshes prices into the user's database
and the command reports what changed (issue 17, freshness)."""
import json

import pytest

from planner_app.cli import main
from planner_app.specdb.catalog import shipped_db

HEADER = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice\n"
A100_40 = '"{""Gpus"": [{""Name"": ""A100"", ""MemoryInfo"": {""SizeInMiB"": 40960}}]}"'


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_USER_DIR", str(tmp_path / "user"))
    return tmp_path


def _vms(tmp_path, body):
    p = tmp_path / "vms.csv"
    p.write_text(HEADER + body)
    return str(p)


def run(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_dry_run_reports_changes_and_saves_nothing(user_dir, capsys):
    old = shipped_db().instance("AWS:us-east-1:p4d.24xlarge")
    new_price = round(old.prices.on_demand * 0.8, 4)
    path = _vms(user_dir, f"p4d.24xlarge,96,1152,A100,8,{A100_40},us-east-1,us-east-1a,{new_price},\n"
                          f"p4d.testlarge,96,1152,A100,8,{A100_40},us-east-1,us-east-1a,1.5,\n"
                          "odd.large,4,16,TPU-v9,1,,us-east-1,us-east-1a,1.0,\n")
    rc, out, err = run(capsys, "specs", "import", path, "--provider", "AWS", "--region", "us-east-1",
                       "--price-date", "2026-11-30", "--dry-run", "--json")
    assert rc == 0, err
    j = json.loads(out)
    assert j["new"] == ["AWS us-east-1 p4d.testlarge"] and j["saved"] == 0
    (change,) = j["changed"]
    assert change["row"] == "AWS us-east-1 p4d.24xlarge"
    assert change["changes"]["price_on_demand_hr"] == [pytest.approx(old.prices.on_demand), new_price]
    assert change["changes"]["price_date"] == [old.prices.date, "2026-11-30"]
    assert j["skipped"] and "TPU-v9" in j["skipped"][0]
    rc, out, err = run(capsys, "specs", "instances", "--json")
    row = next(r for r in json.loads(out) if r["instance_id"] == "p4d.24xlarge")
    assert row["price_on_demand_hr"] == pytest.approx(old.prices.on_demand)  # nothing was saved


def test_import_saves_prices_and_keeps_the_network_fields(user_dir, capsys):
    old = shipped_db().instance("AWS:us-east-1:p4d.24xlarge")
    path = _vms(user_dir, f"p4d.24xlarge,96,1152,A100,8,{A100_40},us-east-1,us-east-1a,20.0,5.0\n")
    rc, out, err = run(capsys, "specs", "import", path, "--provider", "AWS", "--region", "us-east-1",
                       "--price-date", "2026-11-30")
    assert rc == 0, err
    assert "1 with changed prices" in out and "1 rows saved" in out
    assert "price_on_demand_hr" in out and "2026-11-30" in out
    rc, out, err = run(capsys, "specs", "instances", "--json")
    row = next(r for r in json.loads(out) if r["instance_id"] == "p4d.24xlarge")
    assert (row["price_on_demand_hr"], row["price_spot_hr"], row["price_date"]) == (20.0, 5.0, "2026-11-30")
    # SkyPilot has no network data: the shipped row's fabric and intra-node link stay
    assert (row["fabric_id"], row["intra_node_link"], row["nics"]) == (old.fabric_id, old.intra_node_link, old.nics)
    rc, out, err = run(capsys, "specs", "import", path, "--provider", "AWS", "--region", "us-east-1",
                       "--price-date", "2026-11-30")
    assert "0 with changed prices, 1 unchanged" in out


@pytest.mark.parametrize("args, words", [
    (("specs", "import", "X.csv"), "--provider"),
    (("specs", "import", "--provider", "AWS"), "vms.csv"),
    (("specs", "import", "X.csv", "--provider", "AWS", "--price-date", "30/11/2026"), "YYYY-MM-DD"),
    (("specs", "gpus", "--provider", "AWS"), "specs import"),
])
def test_bad_import_arguments_exit_2_with_one_line(user_dir, capsys, args, words):
    rc, out, err = run(capsys, *args)
    assert rc == 2 and words in err and len(err.strip().splitlines()) == 1


GPUHUNT_HEADER = "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size,gpu_vendor\n"


def test_gpuhunt_catalog_zip_merges_on_demand_and_spot(user_dir, capsys):
    import zipfile
    csv_text = (GPUHUNT_HEADER
                + "p4d.24xlarge,us-east-1,19.5,96,1152,8,A100,40,false,,nvidia\n"
                + "p4d.24xlarge,us-east-1,4.2,96,1152,8,A100,40,true,,nvidia\n"
                + "p4d.24xlarge,us-west-2,25.0,96,1152,8,A100,40,false,,nvidia\n"
                + "tpu.large,us-east-1,1.0,4,16,1,v9,16,false,,google\n")
    path = user_dir / "catalog.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("version", "20261130")
        z.writestr("aws.csv", csv_text)
        z.writestr("gcp.csv", GPUHUNT_HEADER)
    rc, out, err = run(capsys, "specs", "import", str(path), "--provider", "AWS", "--price-date", "2026-11-30",
                       "--json")
    assert rc == 0, err
    j = json.loads(out)
    (change,) = j["changed"]  # us-east-1 is the cheapest on-demand location, the shipped row's region
    assert change["row"] == "AWS us-east-1 p4d.24xlarge"
    assert change["changes"]["price_on_demand_hr"][1] == 19.5 and change["changes"]["price_spot_hr"][1] == 4.2
    assert j["skipped"] and "'v9'" in j["skipped"][0]
    rc, out, err = run(capsys, "specs", "instances", "--json")
    row = next(r for r in json.loads(out) if r["instance_id"] == "p4d.24xlarge")
    assert (row["price_on_demand_hr"], row["price_spot_hr"], row["price_date"]) == (19.5, 4.2, "2026-11-30")
    # a provider the zip does not have: one line naming what it has
    rc, out, err = run(capsys, "specs", "import", str(path), "--provider", "Lambda")
    assert rc == 2 and "lambda.csv" in err and "aws.csv" in err and len(err.strip().splitlines()) == 1
