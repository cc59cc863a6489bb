"""The step-time model over numpy arrays (one column per configuration), for plan search.

It computes what ``timing.step_time`` computes, configuration by configuration
(tests/unit/test_sweep.py checks they agree): per-operation compute time of the layers,
tensor/sequence/expert/context-parallel collectives, the pipeline schedule, data-parallel
and ZeRO traffic, the optimizer step.
"""
from __future__ import annotations

import numpy as np

from planner_app.core import compute
from planner_app.core.activations import model_profiles
from planner_app.core.compute import MASKED_ATTENTION_SPEED
from planner_app.core.flops import training_flops_per_token
from planner_app.core.setup import recipe_bytes
from planner_app.core.memory import Layout
from planner_app.core.timing import _efficiency, _topology, step_breakdown
from planner_app.core.trace import factors
from planner_app.core.trace import TPS

def layer_time_vec(p, gpu, eff, tokens, seq, tp, bits_default, head_dim, rec, f, causal):
    """(fwd, bwd, recompute) seconds per layer per micro-batch, arrays."""
    floor = eff.launch_s
    fwd = np.zeros_like(tokens)
    bwd = np.zeros_like(tokens)
    for (k, n, split, bits) in p.gemms:
        b = bits if bits in (8, 16, 32) else bits_default
        peak = gpu.peak_tflops(b) * 1e12
        if split == "k":
            lk, ln, div = k / tp, n, tp
        elif split == "n":
            lk, ln, div = k, n / tp, tp
        else:
            lk, ln, div = k, n, 1
        flops = 2.0 * tokens * k * n / div
        t = np.maximum(flops / (peak * eff.gemm_max * compute.alignment_speed(lk, ln, b)) + eff.gemm_overhead_s, floor)
        fwd = fwd + t
        bwd = bwd + 2 * t
    peak16 = gpu.peak_tflops(16) * 1e12
    attn_f = np.zeros_like(tokens)
    attn_b = np.zeros_like(tokens)
    if p.attn_flops:
        frac = 0.5 if causal and not p.attn_masked else 1.0
        fl = p.attn_flops * tokens * seq * frac / tp
        pk = peak16 if bits_default != 32 else gpu.peak_tflops(32) * 1e12
        e = compute.attention_efficiency(head_dim, eff, bits_default)
        attn_f = np.maximum(fl / (pk * e) + eff.attn_overhead_s, floor)
        attn_b = np.maximum(2.5 * fl / (pk * e) + eff.attn_overhead_s, floor)
        if p.attn_masked:
            attn_f = attn_f / MASKED_ATTENTION_SPEED
            attn_b = attn_b / MASKED_ATTENTION_SPEED
    if p.bmm_flops:
        fl = p.bmm_flops * tokens * seq / tp
        pk = peak16 if bits_default != 32 else gpu.peak_tflops(32) * 1e12
        t = np.maximum(fl / 2 / (pk * eff.gemm_max) + eff.gemm_overhead_s, floor) * 2
        attn_f = attn_f + t
        attn_b = attn_b + 2 * t
    bw = gpu.mem_bw_gb_s * 1e9
    score_f = np.zeros_like(tokens)
    mem_f = np.zeros_like(tokens)
    mem_b = np.zeros_like(tokens)
    if len(p.mem_ops):
        nbytes = p.mem_ops @ f  # (ops, N)
        e = np.where(p.mem_is_reduction, eff.bw_reduction, eff.bw_elementwise)[:, None]
        score_sized = np.outer(p.mem_ops[:, TPS], f[TPS]) > 0.5 * nbytes
        e = np.where(score_sized & ~p.mem_is_reduction[:, None], np.minimum(e, 0.5), e)
        t_ops = nbytes / (bw * e)
        t_fwd = np.maximum(t_ops, floor)
        mem_f = t_fwd.sum(axis=0)
        mem_b = np.maximum(2 * t_ops, floor).sum(axis=0)
        score_f = np.where(score_sized, t_fwd, 0).sum(axis=0)
    fwd = fwd + attn_f + mem_f
    bwd = bwd + attn_b + mem_b
    recomputed = np.where(rec == 2, fwd, np.where(rec == 1, attn_f + score_f, 0.0))
    return fwd, bwd, recomputed


def step_time_vec(model, hw, recipe: str, optimizer: str, attention: str, framework: str, cfg: dict,
                  offload: str = "none", gpus_per_node: int = 8) -> dict:
    """Arrays: step_s, tokens_per_s, mfu (and parts) for each configuration of ``cfg``
    (keys as ``sweep.memory_peak``; ``n_acc`` micro-batches per step)."""
    a = {k: np.asarray(v) for k, v in cfg.items()}
    n = max(np.size(v) for v in a.values())
    a = {k: np.broadcast_to(v, (n,)).astype(float if k not in ("sp", "interleaved") else bool) for k, v in a.items()}
    rb = recipe_bytes(recipe, framework)
    gpu = hw.gpu
    eff = _efficiency(hw, framework)
    topo = _topology(hw, type("P", (), {"gpus_per_node": gpus_per_node})())
    mb, seq, tp, pp, dp, cp, ep = (a[k] for k in ("micro_batch", "seq_len", "tp", "pp", "dp", "cp", "ep"))
    sp, rec, n_acc = a["sp"], a["recompute"], a["n_acc"]
    tokens = mb * seq / cp
    f = factors(tokens, seq, tp, sp, tp)
    head_dim = model.head_dim if model.arch != "deepseek" else model.qk_nope_dim + model.qk_rope_dim
    causal = model.arch != "bert"
    mask_sel = (seq >= model.sliding_window) if model.sliding_window else np.zeros(n, bool)
    profs = {False: model_profiles(model, rb.act_kind, rb.grad, attention, framework, False, False, recipe == "fp8")}
    if mask_sel.any():
        profs[True] = model_profiles(model, rb.act_kind, rb.grad, attention, framework, True, False, recipe == "fp8")

    def times(part, recompute_codes, seq_attn):
        outs = {}
        for msk, prof in profs.items():
            p = getattr(prof, part)
            if p is None:
                return None
            outs[msk] = layer_time_vec(p, gpu, eff, tokens, seq_attn, tp, rb.gemm_bits, head_dim, recompute_codes, f,
                                       causal)
        if len(outs) == 1:
            return outs[False]
        return tuple(np.where(mask_sel, x1, x0) for x0, x1 in zip(outs[False], outs[True]))

    dense_t = times("dense", rec, seq)
    moe_t = times("moe", rec, seq)
    zeros = np.zeros(n)
    emb_t = times("embed", zeros, seq / cp)
    head_t = times("head", zeros, seq / cp)

    s = step_breakdown(model, hw, rb, eff, topo, Layout(**a), {"dense": dense_t, "moe": moe_t, "embed": emb_t,
                                                              "head": head_t}, optimizer, framework, offload,
                       gpus_per_node)
    step = s["step_s"]
    tokens_step = n_acc * mb * dp * ep * seq
    peak = gpu.peak_tflops(rb.gemm_bits) * 1e12
    gpus = tp * pp * cp * ep * dp
    seqs, inverse = np.unique(seq, return_inverse=True)
    model_f_tok = np.array([training_flops_per_token(model, int(s_), "none")[0] for s_ in seqs])[inverse]
    tok_s = tokens_step / step
    col = lambda v: np.broadcast_to(np.asarray(v, dtype=float), (n,))  # noqa: E731 - parts that are 0 everywhere
    return {"step_s": step, "tokens_per_s": tok_s, "gpus": gpus, "mfu": model_f_tok * tok_s / (gpus * peak),
            "bubble_s": col(s["bubble_s"]), "t_mb": col(s["t_mb"]), "dp_exposed_s": col(s["dp_exposed_s"]),
            "opt_s": col(s["opt_s"]), "parts": {k: col(v) for k, v in s["parts"].items()}}
