"""The memory model over numpy arrays: one column per configuration, for sweeps and plan
search (10^5-10^6 configurations per second). It runs the very step timeline of
``memory.training_memory`` (``memory.stage_timeline`` and its steps, array-generic) on columns,
keeping the peak only; tests/unit/test_engine_equality.py checks the two agree.

Configurations (a ``Layout`` of columns) vary micro-batch, sequence length, every parallel
degree, ZeRO stage, sequence parallelism, recomputation and gradient accumulation; the setup
(recipe, optimizer, attention kernel, framework, offload, fine-tuning) is fixed per call. Only the
choice of layer profile per column (selective recomputation, sliding-window mask) and the
evaluation of the profiles' events as totals are specific to columns.
"""
from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, cast

import numpy as np

from planner_app.core.arrays import is_array
from planner_app.core.memo import IdentityMemo
from planner_app.core.models.trace import SLOTS, W, factors
from planner_app.core.training.activations import model_profiles, window_mask
from planner_app.core.training.memory import MEMO_ENTRIES, _compact, stage_timeline
from planner_app.core.training.setup import Layout, TrainingSetup, recipe_bytes
from planner_app.core.training.states import stage_layers

CHUNK = 1 << 15  # configurations per block: keeps the temporaries in the CPU caches
_ZERO_SPLIT = {"cache": 0.0, "grads": 0.0, "other": 0.0}

_TOTALS = IdentityMemo(MEMO_ENTRIES)


def size(c: Layout) -> int:
    """Configurations in a column layout (``columns``: every field a column of one length; Layout
    declares its fields as a ParallelPlan's numbers)."""
    return len(cast(np.ndarray, c.tp))


def _totals_matrix(p):
    """Rows whose product with the factors gives saved, saved (W slot), output, checkpointed
    input, then the total of every undominated fwd, no-grad and bwd event; and each event
    group's (start, count)."""
    hit = _TOTALS.get(p)
    if hit is not None:
        return hit
    w_only = np.zeros(SLOTS)
    w_only[W] = p.saved[W]
    rows, spans = [p.saved, w_only, p.output, p.ckpt_input], []
    for events in (p.fwd_events, p.nograd_events, p.bwd_events):
        tot = _compact(events).sum(axis=1)
        spans.append((len(rows), len(tot)))
        rows.extend(tot)
    m = np.array(rows)
    _TOTALS.put(p, (m, spans))
    return m, spans


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


def profile_variants(model, rb, setup: TrainingSetup, seq_len, selective, lora):
    """The layer profiles a block of columns needs, keyed (selective, mask) over the values
    that occur (``selective``: a bool column, or False), and ``choose``, which takes a value per
    variant and gives each column its variant's."""
    mask_sel = window_mask(model, seq_len)
    variants = {(sel, msk): model_profiles(model, rb.act_kind, rb.grad, setup.attention, setup.framework, msk, sel,
                                           setup.recipe == "fp8", lora)
                for sel in ((False, True) if np.any(selective) else (False,))
                for msk in ((False, True) if mask_sel.any() else (False,))}

    def choose(values: dict):
        out = values[(False, False)]
        for (sel, msk), v in values.items():
            if (sel, msk) != (False, False):
                out = np.where((selective == sel) & (mask_sel == msk), v, out)
        return out

    return variants, choose


def _column_profiles(model, rb, setup: TrainingSetup, c: Layout, lora):
    """Each part's profile per column (the variant of its recompute mode and mask), the mask
    bytes and whether autocast caches weights."""
    n = size(c)
    f = factors(c.tokens, c.seq_len, c.tp, c.sequence_parallel, c.tp)
    variants, choose = profile_variants(model, rb, setup, c.seq_len, c.selective, lora)
    parts: dict[str, _Columns | None] = {}
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


def columns(c: Layout) -> Layout:
    """``c`` with every field a column of one length (numbers broadcast; counts as floats, flags as
    bools), so that each formula runs once over all configurations."""
    values = {f.name: np.asarray(getattr(c, f.name)) for f in fields(c)}
    n = max(np.size(v) for v in values.values())
    out: dict[str, Any] = {}  # columns, in fields declared as numbers
    for k, v in values.items():
        v = np.broadcast_to(v, (n,))
        out[k] = v.astype(bool) if v.dtype == bool else v if v.dtype == object else v.astype(float)
    return replace(c, **out)


def rows(c: Layout, start: int, stop: int) -> Layout:
    """Configurations ``start:stop`` of a column layout."""
    return replace(c, **{f.name: getattr(c, f.name)[start:stop] for f in fields(c)})


def memory_peak(model, setup: TrainingSetup, layout: Layout) -> np.ndarray:
    """Peak allocated bytes per GPU of every configuration of ``layout`` (columns; numbers broadcast)."""
    c = columns(layout)
    n = size(c)
    if n <= CHUNK:
        return _memory_peak(model, setup, c)
    return np.concatenate([_memory_peak(model, setup, rows(c, i, i + CHUNK)) for i in range(0, n, CHUNK)])


def _memory_peak(model, setup: TrainingSetup, c: Layout) -> np.ndarray:
    rb = recipe_bytes(setup.recipe, setup.framework)
    lora = setup.lora(model)
    n = size(c)
    parts, mask, amp_cache = _column_profiles(model, rb, setup, c, lora)
    peak = np.zeros(n)
    for first in (True, False):
        last = (c.pp == 1) if first else np.ones(n, bool)
        nd, nm = stage_layers(model, c.pp, first)
        blocks = [(e, k, k > 0) for e, k in ((parts["dense"], nd), (parts["moe"], nm)) if e is not None]
        profiles = (blocks, parts["embed"] if first else None, parts["head"], mask, amp_cache)
        moments = _PeakMoments(n)
        stage_timeline(model, setup, c, first, last, profiles, moments)
        peak = np.maximum(peak, moments.peak if first else np.where(c.pp > 1, moments.peak, 0.0))
    return peak
