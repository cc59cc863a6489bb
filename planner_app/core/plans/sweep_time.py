"""The step-time model over numpy arrays (one column per configuration), for plan search.

It computes what ``timing.step_time`` computes, configuration by configuration
(tests/unit/test_sweep.py checks they agree): per-operation compute time of the layers,
tensor/sequence/expert/context-parallel collectives, the pipeline schedule, data-parallel
and ZeRO traffic, the optimizer step.
"""
from __future__ import annotations

from typing import cast

import numpy as np

from planner_app.core.models.flops import training_flops_per_token
from planner_app.core.models.trace import factors
from planner_app.core.plans.sweep import columns, profile_variants, size
from planner_app.core.training.setup import Layout, TrainingSetup, recipe_bytes
from planner_app.core.training.timing import host_kernel_s, part_times, step_breakdown


def step_time_columns(model, hw, setup: TrainingSetup, layout: Layout) -> dict:
    """Arrays: step_s, tokens_per_s, mfu (and parts) of every configuration of ``layout`` (columns;
    its ``n_acc`` micro-batches per step, one ``gpus_per_node``)."""
    c = columns(layout)
    n = size(c)
    rb = recipe_bytes(setup.recipe, setup.framework)
    lora = setup.lora(model)
    gpu = hw.gpu
    eff = hw.efficiency(setup.framework)
    topo = hw.topology(int(cast(np.ndarray, c.gpus_per_node)[0]))  # one gpus_per_node, as a column
    seq, tp, cp = c.seq_len, c.tp, c.cp
    f = factors(c.tokens, seq, tp, c.sequence_parallel, tp)
    # the profiles' work (GEMMs, attention, memory-bound ops) is the same with and without
    # selective recomputation, which only changes what is kept: the recompute codes decide
    variants, choose = profile_variants(model, rb, setup, seq, False, lora)
    host = host_kernel_s(model, setup, c, eff)
    per_variant = {key: part_times(model, prof, gpu, eff, rb, c.tokens, seq, cp, tp, f, c.recompute_code, host)
                   for key, prof in variants.items()}
    times = {part: per_variant[(False, False)][part] and tuple(
        choose({key: t[part][i] for key, t in per_variant.items()}) for i in range(3))
        for part in ("dense", "moe", "embed", "head")}
    s = step_breakdown(model, hw, setup, eff, topo, c, times)
    step = s["step_s"]
    tokens_step = c.n_acc * c.micro_batch * c.dp * c.ep * seq
    peak = gpu.peak_tflops(rb.gemm_bits) * 1e12
    gpus = c.gpus
    seqs, inverse = np.unique(seq, return_inverse=True)
    model_f_tok = np.array([training_flops_per_token(model, int(s_), "none", lora)[0] for s_ in seqs])[inverse]
    tok_s = tokens_step / step
    col = lambda v: np.broadcast_to(np.asarray(v, dtype=float), (n,))  # noqa: E731 - parts that are 0 everywhere
    return {"step_s": step, "tokens_per_s": tok_s, "gpus": gpus, "mfu": model_f_tok * tok_s / (gpus * peak),
            "bubble_s": col(s["bubble_s"]), "t_mb": col(s["t_mb"]), "dp_exposed_s": col(s["dp_exposed_s"]),
            "opt_s": col(s["opt_s"]), "parts": {k: col(v) for k, v in s["parts"].items()}}
