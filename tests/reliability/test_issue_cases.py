"""Every case of issue 16's list as a regression test: each gives exit 2 and one line naming
the option or field (no traceback, no hang), or exit 0 with physically possible numbers."""
import errno
import json
import math
import os
import subprocess
import sys

import pytest

from planner_app.core.errors import InputError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EST = ["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm"]
H200X2 = os.path.join(ROOT, "tests", "data", "collectives_h200x2.json")


def one_line_error(rc, out, err, name):
    assert rc == 2, (rc, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert name in lines[0], lines[0]
    assert "Traceback" not in err


CLI_CASES = [
    ("achieved-tflops above the H100's peak", EST + ["--achieved-tflops", "5000"], "--achieved-tflops"),
    ("achieved-tflops 1e300", EST + ["--achieved-tflops", "1e300"], "--achieved-tflops"),
    ("gpus 1e30", EST + ["--gpus", "1e30"], "--gpus"),
    ("micro-batch inf", EST + ["--micro-batch", "inf"], "--micro-batch"),
    ("micro-batch 1e400", EST + ["--micro-batch", "1e400"], "--micro-batch"),
    ("tp 400 digits", EST + ["--tp", "9" * 400], "--tp"),
    ("seq-len -inf", EST + ["--seq-len", "-inf"], "--seq-len"),
    ("tokens nan", EST + ["--tokens", "nan"], "--tokens"),
    ("mfu 5e-324", EST + ["--mfu", "5e-324"], "--mfu"),
    ("mfu -0.1", EST + ["--mfu", "-0.1"], "--mfu"),
    ("price-mix abc%", EST + ["--price-mix", "abc%on_demand"], "--price-mix"),
    ("price-mix nan share", EST + ["--price-mix", "on_demand=nan"], "--price-mix"),
    ("cp with eager attention", EST + ["--gpus", "2", "--cp", "2", "--attention", "eager"], "--attention"),
    ("mfu in inference mode", EST + ["--mode", "inference", "--mfu", "0.3"], "--mfu"),
    ("achieved-tflops in inference mode", EST + ["--mode", "inference", "--achieved-tflops", "300"],
     "--achieved-tflops"),
    ("micro-batch in inference mode", EST + ["--mode", "inference", "--micro-batch", "4"], "--micro-batch"),
    ("nvlink4 as the network", EST + ["--gpus", "16", "--fabric", "nvlink4"], "--fabric"),
    ("scaling with --mfu", ["scaling", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--mfu", "0.3"], "--mfu"),
    ("scaling with --achieved-tflops", ["scaling", "--model", "llama-2-7b", "--gpu", "h100-sxm",
                                        "--achieved-tflops", "300"], "--achieved-tflops"),
    ("scaling over nvlink4", ["scaling", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--fabrics", "nvlink4"],
     "fabric"),
    ("port 70000", ["cluster", "command", "--port", "70000"], "--port"),
    # found by the fuzz suite
    ("scaling nodes 400 digits", ["scaling", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--nodes", "9" * 400],
     "nodes"),
]


@pytest.mark.parametrize("name, argv, flag", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_cases_are_one_line_naming_the_option(cli, name, argv, flag):
    one_line_error(*cli(argv), flag)


def test_achieved_tflops_at_the_peak_is_allowed_and_mfu_stays_at_most_one(cli):
    rc, out, err = cli(EST + ["--achieved-tflops", "989.5", "--json", "--tokens", "1e12"])
    assert rc == 0, err
    t = json.loads(out)["time"]
    assert 0 < t["mfu"] <= 1 and t["hfu"] <= 1 + 1e-9 and math.isfinite(t["train_s"])


def test_the_gui_and_scenario_path_refuses_a_negative_mfu(db):
    """The GUI builds its estimates with estimate_json: a scenario's "mfu": -0.1 once
    gave a 'FITS' with -673.8 days."""
    from planner_app.service.estimate import estimate_json

    with pytest.raises(InputError) as e:
        estimate_json({"model": "llama-2-7b", "gpu": "h100-sxm", "mfu": -0.1, "tokens": 1e12}, db)
    assert e.value.field == "mfu"


def test_an_engine_result_that_is_impossible_is_an_error():
    """A result part refuses a number no real run has, when it is made (core/results.py)."""
    from planner_app.core.errors import ImpossibleResult
    from planner_app.core.training.estimate import TrainingCost, TrainingTime

    def time(**kw):
        base = dict(step_s=1.0, tokens_per_s=1e4, tokens_per_s_per_gpu=1e4, mfu=0.4, hfu=0.5, tflops_per_gpu=300.0,
                    micro_batches_per_step=1, global_batch=8, breakdown_s={"x": -1e-18}, no_overlap_efficiency=0.9,
                    train_s=None)
        return TrainingTime(**{**base, **kw})

    time()  # rounding noise in a time part is fine
    for bad in (dict(step_s=-673.8), dict(mfu=5.05), dict(tokens_per_s=float("nan")),
                dict(breakdown_s={"tensor_parallel_comm": -368.0})):
        with pytest.raises(ImpossibleResult):
            time(**bad)
    with pytest.raises(ImpossibleResult):
        TrainingCost(gpu_hours=1.0, usd=float("inf"))


# ---- config.json ----------------------------------------------------------------------------
def _config(**changes):
    with open(os.path.join(ROOT, "tests", "data", "hf_configs", "llama-2-7b.json")) as f:
        cfg = json.load(f)
    cfg.update(changes)
    return cfg


CONFIGS = [
    ("Infinity", lambda: json.dumps(_config()).replace('"hidden_size": 4096', '"hidden_size": Infinity'), "Infinity"),
    ("NaN", lambda: json.dumps(_config()).replace('"hidden_size": 4096', '"hidden_size": NaN'), "NaN"),
    ("1e999", lambda: json.dumps(_config()).replace('"hidden_size": 4096', '"hidden_size": 1e999'), "hidden_size"),
    ("n_inner abc", lambda: json.dumps({"model_type": "gpt2", "n_embd": 768, "n_layer": 2, "n_head": 12,
                                        "vocab_size": 100, "n_inner": "abc"}), "n_inner"),
    ("400 digits", lambda: json.dumps(_config()).replace('"hidden_size": 4096', '"hidden_size": ' + "9" * 400),
     "hidden_size"),
    ("deep nesting", lambda: '{"a":' * 50000 + "1" + "}" * 50000, "nested"),
    ("a list", lambda: "[1, 2, 3]", "object"),
    ("not JSON", lambda: "{oops", "JSON"),
]


@pytest.mark.parametrize("name, text, words", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_bad_config_json_is_one_line(cli, tmp_path, name, text, words):
    p = tmp_path / "config.json"
    p.write_text(text())
    rc, out, err = cli(["estimate", "--model", str(p), "--gpu", "h100-sxm"])
    one_line_error(rc, out, err, words)


def test_a_fifo_as_model_does_not_hang(tmp_path):
    fifo = tmp_path / "model.json"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "-m", "planner_app", "estimate", "--model", str(fifo), "--gpu", "h100-sxm"],
                       capture_output=True, text=True, timeout=60, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    one_line_error(r.returncode, r.stdout, r.stderr, "--model")


def test_a_folder_as_model_is_one_line(cli, tmp_path):
    d = tmp_path / "cfg.json"
    d.mkdir()
    one_line_error(*cli(["estimate", "--model", str(d), "--gpu", "h100-sxm"]), "--model")


# ---- scenario files -------------------------------------------------------------------------
def _scenario(mutate):
    from planner_app import scenario

    sc = scenario.new_scenario()
    mutate(sc)
    return sc


SCENARIOS = [
    ("meta a string", lambda s: s.__setitem__("meta", "x"), "meta"),
    ("tp abc", lambda s: s["plans"][0].__setitem__("tp", "abc"), "plans[0].tp"),
    ("gpus '8'", lambda s: s["plans"][0].__setitem__("gpus", "8"), "plans[0].gpus"),
    ("mfu -0.1", lambda s: s["plans"][0].__setitem__("mfu", -0.1), "plans[0].mfu"),
    ("plan name 100k", lambda s: s["plans"][0].__setitem__("name", "x" * 100_000), "plans[0].name"),
    ("title 100k", lambda s: s["meta"].__setitem__("title", "x" * 100_000), "meta.title"),
    ("notes a list", lambda s: s["meta"].__setitem__("notes", ["a"]), "meta.notes"),
    ("calibration a number", lambda s: s.__setitem__("calibration", 5), "calibration"),
    ("price_mix unreadable", lambda s: s.__setitem__("price_mix", 7), "price_mix"),
    ("chosen_plan true", lambda s: s.__setitem__("chosen_plan", True), "chosen_plan"),
    ("workload a list", lambda s: s.__setitem__("workload", [1]), "workload"),
    # found by the fuzz suite
    ("a key with a newline", lambda s: s["workload"].__setitem__("x\ny", 1), "workload.x\\ny"),
    ("micro_batch 400 digits", lambda s: s["workload"].__setitem__("micro_batch", 10 ** 400), "micro_batch"),
]


@pytest.mark.parametrize("name, mutate, field", SCENARIOS, ids=[c[0] for c in SCENARIOS])
def test_bad_scenarios_are_one_line_and_write_nothing(cli, tmp_path, name, mutate, field):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(_scenario(mutate)))
    out = tmp_path / "r.json"
    one_line_error(*cli(["report", str(p), "-o", str(out)]), field)
    assert not out.exists()


def test_a_deeply_nested_scenario_is_one_line(cli, tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"schema_version": 2, "meta": ' + "[" * 100_000 + "]" * 100_000 + "}")
    one_line_error(*cli(["report", str(p), "-o", str(tmp_path / "r.json")]), "nested")


# ---- cluster import -------------------------------------------------------------------------
def _result(mutate):
    with open(H200X2) as f:
        d = json.load(f)
    mutate(d)
    return json.dumps(d)


def _negative(d):
    for r in d["rows"]:
        r["algbw_gbps"], r["busbw_gbps"] = -abs(r["algbw_gbps"]), -abs(r["busbw_gbps"])


IMPORTS = [
    ("busbw a string", lambda: _result(lambda d: d["rows"][0].__setitem__("busbw_gbps", "abc")), "rows[0].busbw_gbps"),
    ("bytes null", lambda: _result(lambda d: d["rows"][0].__setitem__("bytes", None)), "rows[0].bytes"),
    ("ranks 0", lambda: _result(lambda d: d["rows"][0].__setitem__("ranks", 0)), "rows[0].ranks"),
    ("unknown collective", lambda: _result(lambda d: d["rows"][0].__setitem__("collective", "gossip")),
     "rows[0].collective"),
    ("future schema", lambda: _result(lambda d: d.__setitem__("schema", "planner.collectives/9")), "newer"),
    ("negative bandwidths", lambda: _result(_negative), "rows[0].algbw_gbps"),
    ("NaN bandwidth", lambda: _result(lambda d: d["rows"][0].update(algbw_gbps=float("nan"),
                                                                     busbw_gbps=float("nan"))), "rows[0]"),
    ("a row a string", lambda: _result(lambda d: d["rows"].__setitem__(0, "x")), "rows[0]"),
    ("environment a list", lambda: _result(lambda d: d.__setitem__("environment", [])), "environment"),
    ("p2p NaN", lambda: _result(lambda d: d.__setitem__("p2p_gbps", [[None, float("nan")], [1.0, None]])),
     "p2p_gbps[0][1]"),
    ("deep nesting", lambda: '{"schema": "planner.collectives/1", "rows": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "nested"),
]


@pytest.mark.parametrize("name, text, field", IMPORTS, ids=[c[0] for c in IMPORTS])
def test_bad_cluster_results_are_one_line_and_never_reach_a_profile(cli, user_dir, tmp_path, name, text, field):
    p = tmp_path / "r.json"
    p.write_text(text())
    one_line_error(*cli(["cluster", "import", str(p), "--profile", "mine"]), field)
    from planner_app.specdb.userdb import UserDB
    assert UserDB.open_default().profile("mine") is None


def test_a_latin1_result_file_is_one_line(cli, user_dir, tmp_path):
    p = tmp_path / "r.json"
    p.write_bytes('{"schema": "planner.collectives/1", "note": "caf\xe9"}'.encode("latin-1"))
    one_line_error(*cli(["cluster", "import", str(p)]), "UTF-8")


def test_an_older_profile_with_negative_bandwidth_is_refused(cli, user_dir):
    """A profile saved before the import checked its numbers gave negative step times."""
    from planner_app.specdb.userdb import UserDB

    with open(H200X2) as f:
        data = json.load(f)
    _negative(data)
    UserDB.open_default().save_profile("old", {"collectives": data}, gpu_id="h200-sxm", device="H200")
    one_line_error(*cli(EST + ["--gpus", "16", "--tp", "8", "--calibration", "old"]), "--calibration")


# ---- files ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["html", "json", "csv"])
def test_a_full_disk_while_writing_a_report_is_one_line_and_leaves_nothing(cli, tmp_path, monkeypatch, fmt):
    import planner_app.atomic as atomic

    def full(path):
        raise OSError(errno.ENOSPC, "No space left on device", path)
    monkeypatch.setattr(atomic, "_fsync_file", full)
    out = tmp_path / f"report.{fmt}"
    out.write_text("the old report")
    sc = os.path.join(ROOT, "examples", sorted(f for f in os.listdir(os.path.join(ROOT, "examples"))
                                               if f.endswith(".json"))[0])
    one_line_error(*cli(["report", sc, "-o", str(out)]), "No space left")
    assert out.read_text() == "the old report"  # the old file is kept whole
    assert os.listdir(tmp_path) == [f"report.{fmt}"]  # no temporary file left


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path):
    from planner_app.atomic import atomic_write_text

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    stale = tmp_path / f".tmp-{p.pid}-abc123"  # what a writer killed with SIGKILL leaves
    stale.write_text("")
    live = tmp_path / f".tmp-{os.getppid()}-def456"  # a live writer's file stays
    live.write_text("")
    other = tmp_path / ".tmp-notes"
    other.write_text("")
    atomic_write_text(str(tmp_path / "out.txt"), "x")
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, other.name, "out.txt"])
