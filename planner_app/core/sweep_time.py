"""The step-time model over numpy arrays (one column per configuration), for plan search.

It computes what ``timing.step_time`` computes, configuration by configuration
(tests/unit/test_sweep.py checks they agree): per-operation compute time of the layers,
tensor/sequence/expert/context-parallel collectives, the pipeline schedule, data-parallel
and ZeRO traffic, the optimizer step.
"""
from __future__ import annotations

import numpy as np

from planner_app.core import compute, network
from planner_app.core.activations import model_profiles
from planner_app.core.compute import MASKED_ATTENTION_SPEED
from planner_app.core.flops import training_flops_per_token
from planner_app.core.setup import recipe_bytes
from planner_app.core.states import stage_layers, stage_params
from planner_app.core.timing import (CP_RING_ATTENTION_OVERLAP, DEEPSPEED_ZERO3_BW_FRACTION, DP_EXPOSED_FRACTION,
                                     FULL_RECOMPUTE_TP_FACTOR, LAST_BACKWARD_SHARE, PARAM_GATHER_OVERLAP,
                                     ZERO3_OVERLAP, ZERO3_OVERLAP_DEFAULT, _efficiency, _topology, pcie_gb_s)
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
    mb, seq, tp, pp, dp, cp, ep, z = (a[k] for k in ("micro_batch", "seq_len", "tp", "pp", "dp", "cp", "ep", "zero"))
    sp, rec, n_acc, inter, vp = a["sp"], a["recompute"], a["n_acc"], a["interleaved"], a["vp"]
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

    act_bytes = 2.0 if rb.act_kind != "fp32" else 4.0
    msg = tokens * model.hidden * act_bytes
    tp_node = network.group_per_node(tp, 1, gpus_per_node)
    tp_layer = np.where(tp > 1, np.where(sp, 8 * network.all_gather_s(msg, tp, topo, tp_node),
                                         4 * network.all_reduce_s(msg, tp, topo, tp_node)), 0.0)
    ep_layer = np.zeros(n)
    if model.is_moe:
        ep_node = network.group_per_node(ep, tp * cp, gpus_per_node)
        ep_layer = np.where(ep > 1, 4 * network.all_to_all_s(tokens * model.top_k * model.hidden * act_bytes / tp,
                                                              ep, topo, ep_node), 0.0)
    cp_node = network.group_per_node(cp, tp, gpus_per_node)
    ring = (cp - 1) * network.send_recv_s(tokens * 2 * model.kv_width * act_bytes / tp, cp_node < cp, topo)
    first_fwd = (dense_t if dense_t is not None else moe_t)[0]
    cp_layer = np.where(cp > 1, 3 * np.maximum(0.0, ring - CP_RING_ATTENTION_OVERLAP * first_fwd), 0.0)

    def stage(first: bool):
        nd, nm = stage_layers(model, pp, first)
        comp = np.zeros(n)
        recs = np.zeros(n)
        tpc = np.zeros(n)
        epc = np.zeros(n)
        cpc = np.zeros(n)
        for t, c, is_moe in ((dense_t, nd, False), (moe_t, nm, True)):
            if t is None:
                continue
            comp = comp + c * (t[0] + t[1])
            recs = recs + c * t[2]
            tpc = tpc + c * tp_layer * np.where(rec == 2, FULL_RECOMPUTE_TP_FACTOR, 1.0)
            if is_moe:
                epc = epc + c * ep_layer
            cpc = cpc + c * cp_layer
        last = (pp == 1) if first else np.ones(n, bool)
        if first:
            comp = comp + emb_t[0] + emb_t[1]
        comp = comp + np.where(last, head_t[0] + head_t[1], 0.0)
        return comp, recs, tpc, epc, cpc

    s1 = stage(True)
    s2 = stage(False)
    tot1, tot2 = sum(s1), sum(s2)
    use2 = (pp > 1) & (tot2 > tot1)
    comp, recs, tpc, epc, cpc = (np.where(use2, y, x) for x, y in zip(s1, s2))
    t_mb = comp + recs + tpc + epc + cpc
    stage_size = tp * cp * ep * dp
    across = stage_size >= gpus_per_node
    p2p = 2 * network.send_recv_s(msg / np.where(sp, tp, 1), across, topo) * np.where(inter, vp, 1)
    p2p = np.where(pp > 1, p2p, 0.0)
    slots = np.where(pp > 1, n_acc + (pp - 1) / np.where(inter, vp, 1), n_acc)
    pipeline_s = slots * (t_mb + p2p)
    bubble_s = (slots - n_acc) * (t_mb + p2p)

    # data-parallel / ZeRO traffic (parameters of the larger of the first and last stage)
    d1, e1 = stage_params(model, pp, tp, ep, True, pp == 1)
    d2, e2 = stage_params(model, pp, tp, ep, False, True)
    dense_p = np.where(pp > 1, np.maximum(d1, d2), d1)
    expert_p = np.where(pp > 1, np.maximum(e1, e2), e1)
    d_dense = dp * ep * cp
    dp_node = network.group_per_node(d_dense, tp, gpus_per_node)
    ar = network.all_reduce_s(dense_p * rb.grad, d_dense, topo, dp_node)
    rs = network.reduce_scatter_s(dense_p * rb.grad, d_dense, topo, dp_node)
    ag = network.all_gather_s(dense_p * rb.param, d_dense, topo, dp_node)
    dp_comm = np.where(d_dense > 1, np.where(z == 0, ar, rs), 0.0)
    gather = np.where((d_dense > 1) & (z > 0), ag, 0.0)
    if model.is_moe:
        e_node = network.group_per_node(dp * cp, tp * cp * ep, gpus_per_node)
        dp_comm = dp_comm + np.where((d_dense > 1) & (expert_p > 0) & (dp * cp > 1),
                                     network.all_reduce_s(expert_p * rb.grad, dp * cp, topo, e_node), 0.0)
    last_bwd = comp * LAST_BACKWARD_SHARE
    per_mb = 2 * gather + dp_comm
    overlap = ZERO3_OVERLAP.get(framework, ZERO3_OVERLAP_DEFAULT)
    if framework == "deepspeed":
        per_mb = per_mb / DEEPSPEED_ZERO3_BW_FRACTION
    zero3 = (z == 3) & (d_dense > 1)
    dp_exposed = np.where(zero3, n_acc * np.maximum(0.0, per_mb - overlap * t_mb),
                          np.maximum(0.0, dp_comm - last_bwd) + DP_EXPOSED_FRACTION * dp_comm)
    gather_exposed = np.where(zero3, 0.0, np.where(gather > 0, np.maximum(0.0, gather - PARAM_GATHER_OVERLAP * t_mb), 0.0))
    if offload != "none":
        dp_exposed = dp_exposed + (dense_p + expert_p) * (rb.grad + rb.param) / (pcie_gb_s(gpu.pcie_gen) * 1e9)
    params_local = (dense_p + expert_p) / np.where(z >= 1, d_dense, 1)
    if offload != "none":
        opt_s = np.zeros(n)
    else:
        unit = compute.optimizer_step_s(1.0, optimizer, rb, framework, gpu, eff, n_tensors=0)
        opt_s = params_local * unit + 200 * eff.launch_s
    step = pipeline_s + dp_exposed + gather_exposed + opt_s
    tokens_step = n_acc * mb * dp * ep * seq
    peak = gpu.peak_tflops(rb.gemm_bits) * 1e12
    gpus = tp * pp * cp * ep * dp
    seqs, inverse = np.unique(seq, return_inverse=True)
    model_f_tok = np.array([training_flops_per_token(model, int(s_), "none")[0] for s_ in seqs])[inverse]
    tok_s = tokens_step / step
    parts = {"compute": n_acc * comp, "recompute": n_acc * recs, "tensor_parallel_comm": n_acc * tpc,
             "expert_parallel_comm": n_acc * epc, "context_parallel_comm": n_acc * cpc, "pipeline_p2p": n_acc * p2p,
             "pipeline_bubble": bubble_s, "data_parallel_comm_exposed": dp_exposed + gather_exposed,
             "optimizer_step": opt_s}
    return {"step_s": step, "tokens_per_s": tok_s, "gpus": gpus, "mfu": model_f_tok * tok_s / (gpus * peak),
            "bubble_s": bubble_s, "t_mb": t_mb, "dp_exposed_s": dp_exposed + gather_exposed, "opt_s": opt_s,
            "parts": parts}
