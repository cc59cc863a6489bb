"""The memory model over numpy arrays: one column per configuration, for sweeps and plan
search (10^5-10^6 configurations per second). It runs the very step timeline of
``memory.training_memory`` (``memory.stage_timeline`` and its steps, array-generic) on columns,
keeping the peak only; tests/unit/test_engine_equality.py checks the two agree.

Configurations vary micro-batch, sequence length, every parallel degree, ZeRO stage,
sequence parallelism, recomputation and gradient accumulation; the model, recipe,
optimizer, attention kernel, framework and offload are fixed per call. Only the choice of
layer profile per column (selective recomputation, sliding-window mask) and the evaluation
of the profiles' events as totals are specific to columns.
"""
from __future__ import annotations

import numpy as np

from planner_app.core.arrays import is_array
from planner_app.core.models.trace import SLOTS, W, factors
from planner_app.core.training.activations import model_profiles, window_mask
from planner_app.core.training.memory import Layout, _compact, stage_timeline
from planner_app.core.training.setup import recipe_bytes
from planner_app.core.training.states import stage_layers

CHUNK = 1 << 15  # configurations per block: keeps the temporaries in the CPU caches
_ZERO_SPLIT = {"cache": 0.0, "grads": 0.0, "other": 0.0}

_TOTALS: dict = {}


def _totals_matrix(p):
    """Rows whose product with the factors gives saved, saved (W slot), output, checkpointed
    input, then the total of every undominated fwd, no-grad and bwd event; and each event
    group's (start, count)."""
    hit = _TOTALS.get(id(p))
    if hit is not None and hit[0] is p:
        return hit[1], hit[2]
    w_only = np.zeros(SLOTS)
    w_only[W] = p.saved[W]
    rows, spans = [p.saved, w_only, p.output, p.ckpt_input], []
    for events in (p.fwd_events, p.nograd_events, p.bwd_events):
        tot = _compact(events).sum(axis=1)
        spans.append((len(rows), len(tot)))
        rows.extend(tot)
    _TOTALS[id(p)] = (p, np.array(rows), spans)
    return _TOTALS[id(p)][1], spans


def _evaluate(p, f: np.ndarray) -> dict:
    m, spans = _totals_matrix(p)
    v = m @ f
    out = {"saved": v[0], "saved_w": v[1], "output": v[2], "ckpt_input": v[3], "wgrads": p.weight_grads * f[W]}
    for name, (start, n) in zip(("fwd", "nograd", "bwd"), spans):
        out[name] = v[start:start + n].max(axis=0)
    return out


class _Columns:
    """A layer profile at every column's factors; each event group is its highest total
    (all of it counted as activations: the search needs the peak, not its split)."""

    def __init__(self, d: dict):
        self.saved, self.saved_w, self.output = d["saved"], d["saved_w"], d["output"]
        self.ckpt_input, self.wgrads = d["ckpt_input"], d["wgrads"]
        self.fwd, self.nograd, self.bwd = ({"act": d[k], **_ZERO_SPLIT} for k in ("fwd", "nograd", "bwd"))


def profile_variants(model, rb, attention, framework, recipe, seq_len, selective, lora=None):
    """The layer profiles a block of columns needs, keyed (selective, mask) over the values
    that occur (``selective``: a bool column, or False), and ``choose``, which takes a value per
    variant and gives each column its variant's."""
    mask_sel = window_mask(model, seq_len)
    variants = {(sel, msk): model_profiles(model, rb.act_kind, rb.grad, attention, framework, msk, sel,
                                           recipe == "fp8", lora)
                for sel in ((False, True) if np.any(selective) else (False,))
                for msk in ((False, True) if mask_sel.any() else (False,))}

    def choose(values: dict):
        out = values[(False, False)]
        for (sel, msk), v in values.items():
            if (sel, msk) != (False, False):
                out = np.where((selective == sel) & (mask_sel == msk), v, out)
        return out

    return variants, choose


def _column_profiles(model, rb, attention, framework, recipe, c: Layout, lora=None):
    """Each part's profile per column (the variant of its recompute mode and mask), the mask
    bytes and whether autocast caches weights."""
    n = len(c.tp)
    f = factors(c.tokens, c.seq_len, c.tp, c.sp, c.tp)
    variants, choose = profile_variants(model, rb, attention, framework, recipe, c.seq_len, c.selective, lora)
    parts = {}
    for part in ("dense", "moe", "embed", "head"):
        if getattr(variants[(False, False)], part) is None:
            parts[part] = None
            continue
        per_variant = {key: _evaluate(getattr(prof, part), f) for key, prof in variants.items()}
        parts[part] = _Columns({k: choose({v: d[k] for v, d in per_variant.items()})
                                for k in per_variant[(False, False)]})
    mask = choose({k: np.full(n, float(v.mask_bytes)) for k, v in variants.items()}) * c.tokens * c.seq_len
    return parts, mask, variants[(False, False)].autocast_weight_cache


class _PeakMoments:
    """The search's moments: only the running maximum of their totals per column."""

    def __init__(self, n: int):
        self.peak = np.zeros(n)

    def start(self, static: dict, earlier):
        self.base = sum(static.values()) + earlier

    def __call__(self, phase, on, **parts):
        if on is False:
            return
        t = self.base
        for x in parts.values():
            if not (type(x) is float and x == 0.0):
                t = t + x
        np.maximum(self.peak, t, out=self.peak, where=on if is_array(on) else True)

    def optimizer_step(self, parts: dict):
        np.maximum(self.peak, sum(parts.values()), out=self.peak)


def memory_peak(model, recipe: str, optimizer: str, attention: str, framework: str, cfg: dict,
                offload: str = "none", optimizer_impl: str = "foreach", lora=None) -> np.ndarray:
    """Peak allocated bytes per GPU for every configuration in ``cfg`` (arrays of equal
    length): micro_batch, seq_len, tp, pp, dp, cp, ep, zero, sp (bool), recompute (0/1/2),
    n_acc (micro-batches per step), interleaved (bool), vp."""
    a = {k: np.asarray(v) for k, v in cfg.items()}
    n = max(np.size(v) for v in a.values())
    a = {k: np.broadcast_to(v, (n,)).astype(float if k not in ("sp", "interleaved") else bool) for k, v in a.items()}
    if n <= CHUNK:
        return _memory_peak(model, recipe, optimizer, attention, framework, a, offload, optimizer_impl, lora)
    return np.concatenate([_memory_peak(model, recipe, optimizer, attention, framework,
                                        {k: v[i:i + CHUNK] for k, v in a.items()}, offload, optimizer_impl, lora)
                           for i in range(0, n, CHUNK)])


def _memory_peak(model, recipe, optimizer, attention, framework, a: dict, offload, impl="foreach",
                 lora=None) -> np.ndarray:
    rb = recipe_bytes(recipe, framework)
    c = Layout(**a)
    n = len(c.tp)
    parts, mask, amp_cache = _column_profiles(model, rb, attention, framework, recipe, c, lora)
    peak = np.zeros(n)
    for first in (True, False):
        last = (c.pp == 1) if first else np.ones(n, bool)
        nd, nm = stage_layers(model, c.pp, first)
        blocks = [(e, k, k > 0) for e, k in ((parts["dense"], nd), (parts["moe"], nm)) if e is not None]
        profiles = (blocks, parts["embed"] if first else None, parts["head"], mask, amp_cache)
        moments = _PeakMoments(n)
        stage_timeline(model, rb, optimizer, offload, framework, c, first, last, profiles, moments, impl, lora)
        peak = np.maximum(peak, moments.peak if first else np.where(c.pp > 1, moments.peak, 0.0))
    return peak
