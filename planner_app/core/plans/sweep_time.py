"""The step-time model over numpy arrays (one column per configuration), for plan search.

It computes what ``timing.step_time`` computes, configuration by configuration
(tests/unit/test_sweep.py checks they agree): per-operation compute time of the layers,
tensor/sequence/expert/context-parallel collectives, the pipeline schedule, data-parallel
and ZeRO traffic, the optimizer step.
"""
from __future__ import annotations

import numpy as np

from planner_app.core.models.flops import training_flops_per_token
from planner_app.core.models.trace import factors
from planner_app.core.plans.sweep import profile_variants
from planner_app.core.training.memory import Layout
from planner_app.core.training.setup import recipe_bytes
from planner_app.core.training.timing import part_times, step_breakdown


def step_time_vec(model, hw, recipe: str, optimizer: str, attention: str, framework: str, cfg: dict,
                  offload: str = "none", gpus_per_node: int = 8, optimizer_impl: str = "foreach",
                  lora=None) -> dict:
    """Arrays: step_s, tokens_per_s, mfu (and parts) for each configuration of ``cfg``
    (keys as ``sweep.memory_peak``; ``n_acc`` micro-batches per step)."""
    a = {k: np.asarray(v) for k, v in cfg.items()}
    n = max(np.size(v) for v in a.values())
    a = {k: np.broadcast_to(v, (n,)).astype(float if k not in ("sp", "interleaved") else bool) for k, v in a.items()}
    rb = recipe_bytes(recipe, framework)
    gpu = hw.gpu
    eff = hw.efficiency(framework)
    topo = hw.topology(gpus_per_node)
    mb, seq, tp, pp, dp, cp, ep = (a[k] for k in ("micro_batch", "seq_len", "tp", "pp", "dp", "cp", "ep"))
    sp, rec, n_acc = a["sp"], a["recompute"], a["n_acc"]
    tokens = mb * seq / cp
    f = factors(tokens, seq, tp, sp, tp)
    # the profiles' work (GEMMs, attention, memory-bound ops) is the same with and without
    # selective recomputation, which only changes what is kept: the recompute codes decide
    variants, choose = profile_variants(model, rb, attention, framework, recipe, seq, False, lora)
    per_variant = {key: part_times(model, prof, gpu, eff, rb, tokens, seq, cp, tp, f, rec)
                   for key, prof in variants.items()}
    times = {part: per_variant[(False, False)][part] and tuple(
        choose({key: t[part][i] for key, t in per_variant.items()}) for i in range(3))
        for part in ("dense", "moe", "embed", "head")}
    s = step_breakdown(model, hw, rb, eff, topo, Layout(**a), times, optimizer, framework, offload, gpus_per_node,
                       optimizer_impl, lora)
    step = s["step_s"]
    tokens_step = n_acc * mb * dp * ep * seq
    peak = gpu.peak_tflops(rb.gemm_bits) * 1e12
    gpus = tp * pp * cp * ep * dp
    seqs, inverse = np.unique(seq, return_inverse=True)
    model_f_tok = np.array([training_flops_per_token(model, int(s_), "none", lora)[0] for s_ in seqs])[inverse]
    tok_s = tokens_step / step
    col = lambda v: np.broadcast_to(np.asarray(v, dtype=float), (n,))  # noqa: E731 - parts that are 0 everywhere
    return {"step_s": step, "tokens_per_s": tok_s, "gpus": gpus, "mfu": model_f_tok * tok_s / (gpus * peak),
            "bubble_s": col(s["bubble_s"]), "t_mb": col(s["t_mb"]), "dp_exposed_s": col(s["dp_exposed_s"]),
            "opt_s": col(s["opt_s"]), "parts": {k: col(v) for k, v in s["parts"].items()}}
