"""LoRA and QLoRA (core/training/lora.py) against the H200 measurements: PEFT and bitsandbytes through a
plain training loop (tests/data/finetune_runs_h200.json) and through Hugging Face Trainer
(tests/data/trainer_runs_h200.json, made after the model was written); trainable parameters as
PEFT counts them; the bad inputs the CLI refuses."""
import contextlib
import io
import json
import os
from dataclasses import replace

import pytest

from accuracy.finetune_accuracy import options_for, trainer_options_for
from accuracy.inputs import run_inputs
from planner_app.core.errors import InputError
from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES
from planner_app.core.models.hf_config import load_hf_config
from planner_app.core.training.lora import NF4_BYTES_PER_PARAM, resolve_lora
from planner_app.core.training.memory import training_memory
from planner_app.core.training.setup import TrainingSetup
from planner_app.service.estimate import estimate_json

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
CONFIGS = os.path.join(DATA, "hf_configs")


def _cases(name, pick):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    return [c for c in cases if c.get("status") == "ok" and pick(c)]


LOOP = _cases("finetune_runs_h200.json", lambda c: c["name"].startswith(("lora", "qlora")))
TRAINER = _cases("trainer_runs_h200.json", lambda c: c["name"] != "trainer-lora-mixtralmini-r16-alllinear-b4s2048")
# prepare_model_for_kbit_training without autocast runs attention on fp32 q/k/v; the engine's fp32
# attention efficiency (measured on GPT-2, head size 64) makes these +20..+23% (docs/validation.md)
FP32_ATTENTION_MISSES = {c["name"] for c in LOOP if c.get("prepare_kbit")}
# Step times still open (measured on the H200, engine too fast; peaks are within 5%). Each has a
# cause the step-time model does not carry yet; no constant was fitted to them:
# - MoE through transformers' grouped_mm experts path (integrations/moe.py: sort, histc, gathers,
#   masked_fill copies, scatter, 128 or 32 experts of 256-512 rows each): priced as one dense GEMM
#   per projection plus its memory traffic, as mixtral-mini already is (-15.7%, docs/validation.md);
# - Phi-3's attention at head_dim 96 (cuDNN SDPA, sdp_utils.cpp; the engine interpolates a(d)
#   between 64 and 128), with q/k contiguous head-major after the cat rotary and v strided in the
#   fused qkv output: the gap is ~2.2x the modelled attention time in both cases (flash at 1024,
#   masked at 2048) - a profile of these kernels is the next measurement.
# Cases still short by 15-30% (none now: the Qwen3-MoE LoRA step was -18.5% until the experts' in-place
# pre-mask of transformers 5.17's grouped_mm_experts_forward joined the trace, found with the per-op profile
# tests/data/kernel_ops_h200.json; now -14.8%)
FAMILY_TIME_MISSES: dict = {}


def _estimate(case, db, trainer: bool):
    opts = (trainer_options_for if trainer else options_for)(case)[0]
    return estimate_json(opts, db)


@pytest.mark.parametrize("case", LOOP + TRAINER, ids=lambda c: c["name"])
def test_peak_memory_within_5_percent_and_trainable_params_exact(case, db):
    est = _estimate(case, db, case in TRAINER)
    peak = est["memory"]["peak_bytes"] - CUBLAS_WORKSPACE_BYTES  # measured peaks exclude the workspace
    assert abs(peak / case["peak_bytes"] - 1) < 0.05, (peak, case["peak_bytes"])
    if case.get("lora"):
        assert est["params"]["trainable"] == case["trainable_params"]


@pytest.mark.parametrize("case", LOOP + TRAINER, ids=lambda c: c["name"])
def test_step_time_within_15_percent(case, db):
    est = _estimate(case, db, case in TRAINER)
    err = est["time"]["step_s"] * 1e3 / case["step_ms_median"] - 1
    if case["name"] in FAMILY_TIME_MISSES:  # still open: short by 15-30%; take it off when it is within 15%
        assert -0.30 < err <= -0.15, f"{case['name']}: {err:+.1%} ({FAMILY_TIME_MISSES[case['name']]})"
        return
    limit = 0.25 if case["name"] in FP32_ATTENTION_MISSES else 0.15
    assert abs(err) < limit, err


def test_qlora_base_bytes_match_bitsandbytes():
    """The frozen 4-bit base as measured after quantisation (params_bytes): NF4 codes and double-
    quantised constants from the QLoRA paper, within 3% of what bitsandbytes allocated."""
    case = next(c for c in LOOP if c["name"] == "qlora-7b-r64-alllinear-noprep-b4s2048")
    model = load_hf_config(os.path.join(CONFIGS, "llama-2-7b.json"))
    lora = resolve_lora(model, TrainingSetup(finetune="qlora", lora_rank=64, lora_targets="all-linear", lora_dtype="fp32", recipe="bf16"))
    linear = lora.linear_params(model.layers, 0)
    base = linear * NF4_BYTES_PER_PARAM + (model.params_total - linear) * 2 + case["trainable_params"] * 4
    assert abs(base / case["params_bytes"] - 1) < 0.03


def test_qlora_below_lora_below_full(db):
    """The ordering every LoRA calculator must keep (gpu_poor issue #1 estimated QLoRA above LoRA)."""
    common = {"model": "llama-2-7b", "gpu": "h100-sxm", "micro_batch": 1, "seq_len": 2048}
    full = estimate_json(common, db)["memory"]["peak_bytes"]
    lora = estimate_json({**common, "finetune": "lora"}, db)["memory"]["peak_bytes"]
    qlora = estimate_json({**common, "finetune": "qlora"}, db)["memory"]["peak_bytes"]
    assert qlora < lora < full
    assert lora < full / 2  # no gradients or optimizer states for 6.7B weights


def test_frozen_base_saves_fewer_activations_than_full_training():
    model = load_hf_config(os.path.join(CONFIGS, "llama-3.2-1b.json"))
    full, plan = run_inputs(micro_batch=4)
    lora = replace(full, finetune="lora", lora_dtype="bf16")
    assert training_memory(model, lora, plan).activations_per_layer_bytes < \
        training_memory(model, full, plan).activations_per_layer_bytes


def _cli(argv):
    from planner_app.cli import main
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    return code, err.getvalue().strip()


BASE = ["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm"]


@pytest.mark.parametrize("extra,flag", [
    (["--lora-rank", "8"], "--lora-rank"),  # a LoRA option without --finetune lora|qlora
    (["--lora-targets", "q_proj"], "--lora-targets"),
    (["--qlora-prepare"], "--qlora-prepare"),
    (["--finetune", "lora", "--qlora-prepare"], "--qlora-prepare"),
    (["--finetune", "lora", "--lora-rank", "0"], "--lora-rank"),
    (["--finetune", "lora", "--lora-rank", "5000"], "--lora-rank"),  # above the layer width (4096)
    (["--finetune", "lora", "--lora-targets", "q_proj,query_key_value"], "--lora-targets"),
    (["--finetune", "qlora", "--recipe", "fp32"], "--recipe"),  # QLoRA with fp32 weights
    (["--finetune", "lora", "--lora-dtype", "bf16", "--recipe", "amp-bf16"], "--lora-dtype"),
    (["--finetune", "lora", "--framework", "megatron"], "--finetune"),
    (["--finetune", "lora", "--offload", "optimizer"], "--offload"),
    (["--finetune", "dora"], "--finetune"),
])
def test_bad_lora_input_exits_2_naming_the_field(extra, flag):
    code, err = _cli(BASE + extra)
    assert code == 2
    assert len(err.splitlines()) == 1 and flag in err, err


def test_moe_all_linear_is_refused_not_guessed():
    model = load_hf_config(os.path.join(CONFIGS, "mixtral-mini.json"))
    with pytest.raises(InputError) as e:
        resolve_lora(model, TrainingSetup(finetune="lora", lora_rank=16, lora_targets="all-linear", lora_dtype="fp32", recipe="bf16"))
    assert e.value.field == "lora_targets"
    # the engine takes a resolved setup: the recipe is the service's default, given here
    assert resolve_lora(model, TrainingSetup(finetune="lora", lora_rank=16, lora_targets="q_proj,k_proj,v_proj,o_proj",
                                             recipe="bf16")).targets == (
        "k_proj", "o_proj", "q_proj", "v_proj")


def test_qlora_prepare_turns_gradient_checkpointing_on(db):
    est = estimate_json({"model": "llama-2-7b", "gpu": "h100-sxm", "finetune": "qlora",
                                 "qlora_prepare": True}, db)
    assert est["setup"]["recompute"] == "full"
    assert any("prepare_model_for_kbit_training turns gradient checkpointing on" in a for a in est["assumptions"])


def test_lora_checkpoint_holds_the_adapters_not_the_frozen_base(db):
    """Trainer saves a PeftModel with save_pretrained: the adapters (and their optimizer states),
    not the 8B base."""
    est = estimate_json({"model": "llama-3.1-8b", "gpu": "h100-sxm", "finetune": "lora", "lora_rank": 16,
                                 "lora_targets": "all-linear"}, db)
    ck = est["host"]["checkpoint"]
    n = est["params"]["trainable"]
    assert ck["weights_bytes"] == n * 4  # fp32 adapters
    assert ck["resumable_bytes"] < 4 * n * 4  # adapters + two Adam moments + RNG, far below the 16 GB base


def test_paged_8bit_adamw_states_sit_outside_the_peak(db):
    """bitsandbytes PagedAdamW8bit: its states live in CUDA managed memory, which
    max_memory_allocated does not count (measured: 29.53 GB against 32.00 GB unpaged on the same
    run); the engine keeps them out of the peak and reports them on their own."""
    case = next(c for c in _cases("finetune_runs_h200.json", lambda c: c["name"].startswith("bnb-paged")))
    opts = options_for(case)[0]
    est = estimate_json(opts, db)
    peak = est["memory"]["peak_bytes"] - CUBLAS_WORKSPACE_BYTES
    assert abs(peak / case["peak_bytes"] - 1) < 0.05
    unpaged = estimate_json({**opts, "optimizer": "adamw-8bit"}, db)["memory"]
    paged = est["memory"]["paged_optimizer_states_bytes"]
    assert paged == unpaged["breakdown"]["optimizer_states"] > 0
    assert abs(unpaged["peak_bytes"] - est["memory"]["peak_bytes"] - paged) < 1e6
