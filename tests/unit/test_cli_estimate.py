"""``gpu-planner estimate`` and ``models``: JSON keys, and bad input that exits 2 with one
line naming the option."""
import json

import pytest

from planner_app.cli import main


def run(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


BASE = ["estimate", "--model", "llama-2-7b", "--gpu", "H100 SXM", "--micro-batch", "2", "--seq-len", "2048",
        "--recipe", "bf16"]


def test_estimate_json_has_the_contract_keys(capsys):
    rc, out, err = run(capsys, *BASE, "--tokens", "1e11", "--json")
    assert rc == 0, err
    j = json.loads(out)
    for k in ("peak_bytes", "breakdown", "fits"):
        assert k in j["memory"]
    assert abs(sum(j["memory"]["breakdown"].values()) - j["memory"]["peak_bytes"]) < 1
    for k in ("step_s", "tokens_per_s", "mfu", "train_s"):
        assert j["time"][k] > 0
    assert j["cost"]["gpu_hours"] > 0
    assert j["params"]["total"] == 6738415616
    assert j["assumptions"]


def test_estimate_with_an_instance_has_cost_in_usd(capsys):
    rc, out, err = run(capsys, "estimate", "--model", "llama-3.1-8b", "--instance", "p5.48xlarge", "--gpus", "16",
                       "--zero", "1", "--tokens", "1e11", "--json")
    assert rc == 0, err
    j = json.loads(out)
    assert j["cost"]["usd"] > 0 and j["cost"]["instances"] == 2
    assert j["parallel"]["nodes"] == 2


def test_inference_estimate(capsys):
    rc, out, err = run(capsys, "estimate", "--model", "llama-2-7b", "--gpu", "h100 sxm", "--mode", "inference",
                       "--batch", "8", "--prompt-len", "1024", "--new-tokens", "128", "--json")
    assert rc == 0, err
    j = json.loads(out)
    assert j["memory"]["kv_cache_bytes"] == 2 * 32 * 4096 * 2 * 8 * 1152
    assert j["time"]["decode_tokens_per_s"] > 0 and j["memory"]["largest_batch"] > 8


def test_text_output_mentions_the_verdict(capsys):
    rc, out, _ = run(capsys, *BASE)
    assert rc == 0 and ("FITS" in out or "DOES NOT FIT" in out)


@pytest.mark.parametrize("extra,option", [
    (["--micro-batch", "0"], "--micro-batch"),
    (["--micro-batch", "-3"], "--micro-batch"),
    (["--seq-len", "2.5"], "--seq-len"),
    (["--tp", "3"], "--tp"),
    (["--pp", "64"], "--pp"),
    (["--recipe", "fp9"], "--recipe"),
    (["--gpu", "no-such-gpu"], "--gpu"),
    (["--model", "no-such-model"], "--model"),
    (["--gpus", "12", "--tp", "8"], "--gpus"),
    (["--gpus", "8", "--dp", "2", "--tp", "2"], "--gpus"),
    (["--global-batch", "3", "--dp", "2"], "--global-batch"),
    (["--fabric", "carrier-pigeon", "--gpus", "16"], "--fabric"),
    (["--zero", "5"], "--zero"),
    (["--mfu", "1.5"], "--mfu"),
    (["--ep", "2"], "--ep"),
])
def test_bad_input_exits_2_with_one_line(capsys, extra, option):
    args = list(BASE)
    for i in range(0, len(extra), 2):
        if extra[i] in args:
            args[args.index(extra[i]) + 1] = extra[i + 1]
        else:
            args += extra[i:i + 2]
    rc, out, err = run(capsys, *args)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "Traceback" not in err, err


def test_config_json_path(capsys, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
                               "vocab_size": 50257, "n_positions": 1024}))
    rc, out, err = run(capsys, "estimate", "--model", str(cfg), "--gpu", "a100 80gb", "--json")
    assert rc == 0, err
    assert json.loads(out)["params"]["total"] == 124439808


def test_unsupported_config_json(capsys, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "t5", "d_model": 512}))
    rc, _, err = run(capsys, "estimate", "--model", str(cfg), "--gpu", "a100 80gb")
    assert rc == 2 and "model_type" in err and len(err.strip().splitlines()) == 1


def test_models_lists_presets_with_sources(capsys):
    rc, out, _ = run(capsys, "models", "--json")
    rows = json.loads(out)
    ids = {r["id"] for r in rows}
    for want in ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base-uncased", "bert-large-uncased",
                 "gpt3-175b", "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b",
                 "llama-3.1-405b", "mistral-7b", "mixtral-8x7b", "mixtral-8x22b", "qwen2.5-7b", "qwen2.5-72b",
                 "deepseek-v3", "resnet-50", "nlp-1b"):
        assert want in ids
    assert all(r["source"] and r["retrieved"] for r in rows)
    assert {r["origin"] for r in rows} == {"shipped"}


def test_models_lists_the_users_own_models_and_estimate_takes_them(capsys, tmp_path, monkeypatch):
    """One catalog for every command: a model saved in the user's database is listed by
    ``models`` and estimated by name."""
    from planner_app.specdb.catalog import shipped_db
    from planner_app.specdb.userdb import UserDB

    monkeypatch.setenv("PLANNER_USER_DIR", str(tmp_path))
    row = dict(next(r for r in shipped_db().records["models"] if r["id"] == "llama-3.1-8b"))
    row.pop("origin", None)
    row.update(id="my-8b-variant", name="My 8B variant", aliases="", layers=16, params=0)
    u = UserDB.open_default()
    u.upsert("models", {k: ("" if v is None else v) for k, v in row.items()})
    u.close()
    rc, out, err = run(capsys, "models", "--json")
    assert rc == 0, err
    mine = [r for r in json.loads(out) if r["id"] == "my-8b-variant"]
    assert len(mine) == 1 and mine[0]["origin"] == "user" and mine[0]["layers"] == 16
    rc, out, err = run(capsys, "estimate", "--model", "my-8b-variant", "--gpu", "h100-sxm", "--json")
    assert rc == 0, err
    assert "(16 layers" in json.loads(out)["model"]["summary"]


def test_estimate_called_in_process_leaves_the_garbage_collector_as_it_was(capsys):
    # Only a process of its own (main() without argv) turns the collector off and freezes at exit.
    import gc

    frozen = gc.get_freeze_count()
    rc, out, err = run(capsys, *BASE, "--json")
    assert rc == 0, err
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_estimate_process_closes_the_user_database(tmp_path):
    """The command's process skips the collector, so it must close every database it opens:
    an unclosed SQLite connection in WAL mode leaves its -wal and -shm files behind."""
    import os
    import subprocess
    import sys

    from planner_app.specdb.userdb import UserDB

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "tests", "data", "probe_h200.json"), encoding="utf-8") as f:
        bench = json.load(f)
    db = UserDB(str(tmp_path / "planner.sqlite"))
    db.save_profile("lab", {"bench": bench}, gpu_id="h200-sxm", device="NVIDIA H200")
    db.close()
    env = dict(os.environ, PLANNER_USER_DIR=str(tmp_path))
    for extra in ([], ["--calibration", "lab"], ["--calibration", "none-such"]):
        p = subprocess.run([sys.executable, "-m", "planner_app", "estimate", "--model", "llama-2-7b", "--gpu", "h200",
                            "--json", *extra], cwd=root, env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == (2 if "none-such" in extra else 0), p.stderr
        assert sorted(os.listdir(tmp_path)) == ["planner.sqlite"], extra
