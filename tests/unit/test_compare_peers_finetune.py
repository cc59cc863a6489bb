"""accuracy/compare_peers_finetune.py's own logic, run in the project's environment (the peers
themselves are not installed here): the cases it builds, the dense parameter count it hands the
peers for 4-bit runs, and that the CLI flags it passes to `gpu-planner estimate` give the same peak
as accuracy/finetune_accuracy.py's options."""
import contextlib
import io
import json
import os

from accuracy import compare_peers_finetune as peers
from planner_app.cli import main as cli_main
from planner_app.service.catalog import open_catalog
from planner_app.service.estimate import estimate_json


def test_cases_cover_every_training_run_of_both_files():
    cases = peers.load_cases()
    with open(os.path.join(peers.DATA, "finetune_runs_h200.json"), encoding="utf-8") as f:
        plain = [c["name"] for c in json.load(f)["cases"] if not c["name"].startswith("generate")]
    with open(os.path.join(peers.DATA, "trainer_runs_h200.json"), encoding="utf-8") as f:
        trainer = [c["name"] for c in json.load(f)["cases"] if c["status"] == "ok"]
    assert [c["name"] for c in cases] == plain + trainer
    gen = peers.load_generate_cases()
    assert gen and all(c["name"].startswith("generate") for c in gen)


def test_dense_params_unpacks_bitsandbytes_4bit():
    by_name = {c["name"]: c for c in peers.load_cases()}
    # the QLoRA run's base is the same Llama-2-7B as the LoRA run, whose params are all bf16
    assert by_name["qlora-7b-r64-alllinear-prep-b4s2048"]["params"] == by_name["lora-7b-r8-qv-b4s2048"]["params"]
    assert by_name["qlora-7b-r64-alllinear-prep-b4s2048"]["method"] == "qlora"
    # prepare_model_for_kbit_training turns checkpointing on even where the run did not ask for it
    assert by_name["trainer-qlora-7b-r16-alllinear-prep-b4s2048"]["gc"] is True
    assert peers._targets({"target_modules": ["q_proj", "v_proj"]}) == "qv"


def test_cli_flags_reproduce_the_options_estimate():
    db = open_catalog()
    checked = 0
    for case in peers.load_cases():
        opts = case["opts"]
        if opts is None or case["name"].startswith("trainer-lora-mixtral"):
            continue
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = cli_main(["estimate", *peers._cli_args(opts), "--json"])
        assert rc == 0, case["name"]
        via_cli = json.loads(buf.getvalue())["memory"]["peak_bytes"]
        assert via_cli == estimate_json(opts, db)["memory"]["peak_bytes"], case["name"]
        checked += 1
    assert checked >= 30
