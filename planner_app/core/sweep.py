"""The memory model over numpy arrays: one column per configuration, for sweeps and plan
search (10^5-10^6 configurations per second). It computes the same step timeline as
``memory.training_memory`` (peak only, no breakdown); tests/unit/test_sweep.py checks the
two agree configuration by configuration.

Configurations vary micro-batch, sequence length, every parallel degree, ZeRO stage,
sequence parallelism, recomputation and gradient accumulation; the model, recipe,
optimizer, attention kernel, framework and offload are fixed per call.
"""
from __future__ import annotations

import numpy as np

from planner_app.core.activations import model_profiles
from planner_app.core.setup import recipe_bytes
from planner_app.core.states import (ADAFACTOR_STATE_BYTES, CUBLAS_WORKSPACE_BYTES, DS_BUCKET_ELEMS,
                                     adafactor_state_bytes, model_states, shard, stage_layers, stage_params)
from planner_app.core.trace import SLOTS, W, factors

RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2}


def _prune(events: np.ndarray) -> np.ndarray:
    """Event totals (events, SLOTS) without those another event dominates in every slot:
    with non-negative factors a dominated event can never be the peak."""
    tot = events.sum(axis=1) if events.ndim == 3 else events
    keep = []
    for i, e in enumerate(tot):
        if not any(j != i and np.all(tot[j] >= e) and (np.any(tot[j] > e) or j < i) for j in range(len(tot))):
            keep.append(e)
    return np.array(keep).reshape(-1, SLOTS)


class _VecProfile:
    """A layer profile reduced to what the peak needs, evaluated on factor arrays."""

    def __init__(self, p):
        self.saved = p.saved
        self.saved_w = p.saved[W]
        self.ckpt_input = p.ckpt_input
        self.output = p.output
        self.weight_grads = p.weight_grads
        self.fwd = _prune(p.fwd_events)
        self.nograd = _prune(p.nograd_events)
        self.bwd = _prune(p.bwd_events)

    def at(self, f: np.ndarray) -> dict:
        return {"saved": self.saved @ f, "saved_w": self.saved_w * f[W], "ckpt": self.ckpt_input @ f,
                "out": self.output @ f, "wg": self.weight_grads * f[W],
                "fwd": (self.fwd @ f).max(axis=0), "nograd": (self.nograd @ f).max(axis=0),
                "bwd": (self.bwd @ f).max(axis=0)}


CHUNK = 1 << 15  # configurations per block: keeps the temporaries in the CPU caches


def memory_peak(model, recipe: str, optimizer: str, attention: str, framework: str, cfg: dict,
                offload: str = "none") -> np.ndarray:
    """Peak allocated bytes per GPU for every configuration in ``cfg`` (arrays of equal
    length): micro_batch, seq_len, tp, pp, dp, cp, ep, zero, sp (bool), recompute (0/1/2),
    n_acc (micro-batches per step), interleaved (bool), vp."""
    a = {k: np.asarray(v) for k, v in cfg.items()}
    n = max(np.size(v) for v in a.values())
    a = {k: np.broadcast_to(v, (n,)).astype(float if k not in ("sp", "interleaved") else bool) for k, v in a.items()}
    if n <= CHUNK:
        return _memory_peak(model, recipe, optimizer, attention, framework, a, offload)
    return np.concatenate([_memory_peak(model, recipe, optimizer, attention, framework,
                                        {k: v[i:i + CHUNK] for k, v in a.items()}, offload)
                           for i in range(0, n, CHUNK)])


def _memory_peak(model, recipe, optimizer, attention, framework, a: dict, offload) -> np.ndarray:
    rb = recipe_bytes(recipe, framework)
    n = len(a["tp"])
    tp, pp, dp, cp, ep, z = a["tp"], a["pp"], a["dp"], a["cp"], a["ep"], a["zero"]
    rec = a["recompute"]
    seq = a["seq_len"]
    tokens = a["micro_batch"] * seq / cp
    f = factors(tokens, seq, tp, a["sp"], tp)
    d_dense = dp * ep * cp
    d_exp = dp * cp
    mask_sel = (seq >= model.sliding_window) if model.sliding_window else np.zeros(n, bool)
    masks = (False, True) if mask_sel.any() else (False,)
    sels = (False, True) if (rec == 1).any() else (False,)
    variants = {(sel, msk): model_profiles(model, rb.act_kind, rb.grad, attention, framework, msk, sel,
                                           recipe == "fp8")
                for sel in sels for msk in masks}

    def choose(values: dict):
        """Per configuration, the value of the variant it uses (selective x mask)."""
        out = values[(False, False)]
        for (sel, msk), v in values.items():
            if (sel, msk) == (False, False):
                continue
            cond = ((rec == 1) if sel else (rec != 1)) & (mask_sel if msk else ~mask_sel)
            out = np.where(cond, v, out)
        return out

    def evals(part):
        per_variant = {}
        for key, prof in variants.items():
            p = getattr(prof, part)
            if p is None:
                return None
            per_variant[key] = _VecProfile(p).at(f)
        return {k: choose({v: per_variant[v][k] for v in per_variant}) for k in per_variant[(False, False)]}

    dense_e, moe_e, emb_e, head_e = evals("dense"), evals("moe"), evals("embed"), evals("head")
    mask_bytes = choose({k: np.full(n, float(v.mask_bytes)) for k, v in variants.items()})
    mask = mask_bytes * tokens * seq
    n_acc = a["n_acc"]
    grads_present = (n_acc > 1) | (pp > 1)
    ckpt = rec == 2

    peaks = []
    for first in (True, False):
        last_arr = (pp == 1) if first else np.ones(n, bool)
        active = np.ones(n, bool) if first else (pp > 1)
        nd, nm = stage_layers(model, pp, first)
        dense_p, expert_p = stage_params(model, pp, tp, ep, first, last_arr)
        params, grads, master, opt = model_states(dense_p, expert_p, rb, optimizer, z, d_dense, d_exp)
        states = shard(dense_p, expert_p, d_dense, d_exp, z >= 1)
        if optimizer == "adafactor":
            opt = adafactor_state_bytes(model) / tp / pp / np.where(z >= 1, d_dense, 1)
        if offload != "none":
            master, opt, grads_gpu = 0 * master, 0 * opt, 0 * grads
        else:
            grads_gpu = grads
        if offload == "params":
            params = 0 * params
        opt_temp = np.zeros(n)
        if offload == "none" and framework == "pytorch":
            if optimizer in ("adam", "adamw"):
                opt_temp = states * rb.state
            elif optimizer == "adafactor":
                opt_temp = np.full(n, 2 * ADAFACTOR_STATE_BYTES * model.vocab * model.hidden) / tp
        buffers = np.full(n, float(CUBLAS_WORKSPACE_BYTES))
        comm = d_dense > 1
        n_local = dense_p + expert_p
        if framework == "pytorch":
            buffers = buffers + np.where(comm & (z == 0), n_local * rb.grad, 0)
        if framework == "deepspeed":
            buffers = buffers + np.where(comm, np.minimum(DS_BUCKET_ELEMS, n_local) * rb.grad, 0)
        layer_p = max(model.dense_layer_params() if model.dense_mlp_layers else 0,
                      model.moe_layer_params() if model.moe_layers else 0) / tp
        gather_on = ((z == 3) & comm) | (offload == "params")
        gather = np.where(gather_on, 2 * layer_p * rb.param, 0)

        inter = a["interleaved"]
        infl = np.where(inter, pp * (1 + (pp - 1) / (pp * a["vp"])), pp)
        inflight = np.where(pp > 1, np.minimum(infl, np.maximum(n_acc, 1)), 1) if first else np.ones(n)
        blocks = [(dense_e, nd), (moe_e, nm)]
        blocks = [(b, c) for b, c in blocks if b is not None]
        per_mb = (emb_e["saved"] if first else 0) + sum(np.where(ckpt, b["ckpt"], b["saved"]) * c for b, c in blocks)
        earlier = (inflight - 1) * per_mb
        wshard = np.where(grads_present | (offload != "none"), 0.0, 1.0 / np.where(z >= 2, d_dense, 1))
        static = params + opt + master + buffers + np.where(grads_present, grads_gpu, 0) + earlier
        amp_cache = rb.act_kind == "amp"

        moments = []
        carry = np.zeros(n)
        cache = np.zeros(n)
        if first:
            moments.append(static + emb_e["fwd"] + mask)
            carry = carry + emb_e["saved"]
        for b, c in blocks:
            has = c > 0
            cm1 = np.maximum(c - 1, 0)
            ck_cache = cache + c * b["saved_w"] if amp_cache else np.zeros(n)
            fwd_ck = static + carry + cm1 * b["ckpt"] + b["nograd"] + mask + ck_cache + gather
            fwd_nc = static + carry + cm1 * b["saved"] + b["fwd"] + mask + gather
            moments.append(np.where(has, np.where(ckpt, fwd_ck, fwd_nc), 0))
            carry = carry + c * np.where(ckpt, b["ckpt"], b["saved"])
            cache = np.where(ckpt, ck_cache, cache)
        head_on = last_arr & active
        if head_e is not None:
            moments.append(np.where(head_on, static + carry + cache + head_e["fwd"] + mask, 0))
        bmask = np.where(ckpt, mask, 0)
        wg_done = np.zeros(n)
        if head_e is not None:
            moments.append(np.where(head_on, static + carry + head_e["bwd"] + bmask, 0))
            wg_done = wg_done + np.where(head_on, head_e["wg"] * wshard, 0)
        for b, c in reversed(blocks):
            has = c > 0
            per = np.where(ckpt, b["ckpt"], b["saved"])
            before = carry - c * per
            for j in ("last", "first"):
                jj = np.maximum(c - 1, 0) if j == "last" else np.zeros(n)
                base = static + before + jj * per + wg_done + (np.maximum(c - 1, 0) - jj) * b["wg"] * wshard
                rc = base + b["fwd"] + b["out"] + bmask + gather
                bw = base + b["bwd"] + bmask + gather
                moments.append(np.where(has & ckpt, rc, 0))
                moments.append(np.where(has, bw, 0))
            carry = before
            wg_done = wg_done + c * b["wg"] * wshard
        if first:
            moments.append(static + emb_e["bwd"] + wg_done)
        moments.append(params + opt + master + buffers + grads_gpu + opt_temp)
        stage_peak = np.max(np.stack(moments), axis=0)
        peaks.append(np.where(active, stage_peak, 0))
    return np.maximum(peaks[0], peaks[1])
