"""The engine inputs of a measured run, with the settings the runs of tests/data/ were made with
where a case does not state them: a hand-written PyTorch loop with ``torch.optim.AdamW()`` (no
arguments: its foreach implementation on CUDA), SDPA attention, bf16 weights, one GPU. The user-facing
defaults are the request's (core/requests.py: Hugging Face Trainer's fused AdamW, the GPU's recipe);
a measured run's settings are what it ran with, written here once."""
from __future__ import annotations

from dataclasses import fields

from planner_app.core.inference.setup import InferenceSetup
from planner_app.core.training.setup import ParallelPlan, TrainingSetup

# What the H200 runs of tests/data/training_runs_h200.json, finetune_runs_h200.json and the
# validation loop (probe/validate.py) set when a case does not say otherwise
MEASURED_SETUP = {"seq_len": 2048, "recipe": "bf16", "attention": "sdpa", "optimizer_impl": "foreach"}
MEASURED_LAYOUT = {"dp": 1}
# The decode runs (tests/data/decode_runs_h200.json): a hand-written model(input_ids) loop, flash attention
MEASURED_INFERENCE = {"attention": "flash", "inference_api": "forward-loop"}

_SETUP_KEYS = {f.name for f in fields(TrainingSetup)}
_PLAN_KEYS = {f.name for f in fields(ParallelPlan)}


def run_inputs(**settings) -> tuple[TrainingSetup, ParallelPlan]:
    """(setup, plan) of a run: its settings by option name (setup and layout alike), the measured
    runs' for the rest."""
    unknown = set(settings) - _SETUP_KEYS - _PLAN_KEYS
    if unknown:
        raise TypeError(f"not a setting of a training run: {', '.join(sorted(unknown))}")
    setup = TrainingSetup(**{**MEASURED_SETUP, **{k: v for k, v in settings.items() if k in _SETUP_KEYS}})
    plan = ParallelPlan(**{**MEASURED_LAYOUT, **{k: v for k, v in settings.items() if k in _PLAN_KEYS}})
    return setup, plan


def inference_inputs(**settings) -> InferenceSetup:
    """The InferenceSetup of a decode run: its settings, the measured runs' for the rest."""
    return InferenceSetup(**{**MEASURED_INFERENCE, **settings})


def one_gpu_deployment(**changes):
    """The serving engine's layout of the decode and prefill runs: one vLLM replica on one GPU, 16-bit
    weights and KV cache, vLLM's smaller engine settings (the runs' steps are one batch: they do not
    use them); ``changes`` by field."""
    from planner_app.core.serving import engine as sv

    base = dict(tp=1, pp=1, ep=1, attention_dp=1, replicas=1, weight_bytes=sv.SERVE_WEIGHT_BYTES["bf16"],
                kv_bytes=sv.SERVE_KV_BYTES["bf16"], gmu=sv.GPU_MEMORY_UTILIZATION,
                max_num_seqs=sv.MAX_NUM_SEQS_SMALL, max_batched_tokens=sv.MAX_BATCHED_TOKENS_SMALL,
                **sv.engine_fields("vllm"))
    return sv.Deployment(**{**base, **changes})
