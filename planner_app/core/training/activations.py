"""Per-layer activation profiles of a model under one implementation and recipe.

Builds the layer traces (``layers_hf`` for ``pytorch``/``deepspeed``, ``layers_megatron``
for ``megatron``) and simulates them once; results are cached, so a single estimate after
the first costs a dictionary lookup.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from planner_app.core.arrays import is_array
from planner_app.core.models import layers_hf, layers_megatron
from planner_app.core.models.hf_ops import HFLayerSpec
from planner_app.core.models.trace import TPS, LayerProfile, W, simulate


@dataclass(frozen=True)
class ModelProfiles:
    """Simulated profiles of the parts of one model: embedding, layer kinds, head."""

    embed: LayerProfile
    dense: LayerProfile | None
    moe: LayerProfile | None
    head: LayerProfile
    mask_bytes: float  # bytes per token per sequence position of a materialised attention mask
    autocast_weight_cache: bool  # fp32 weights are cast to 16 bits and cached in forward


def _drop_score_terms(p: LayerProfile) -> LayerProfile:
    """Selective recomputation (Korthikanti et al. 2022 sec. 5): the attention score
    tensors (the s^2 terms) are not kept but recomputed in this layer's backward."""
    saved = p.saved.copy()
    dropped = saved[TPS]
    saved[TPS] = 0.0
    fwd = p.fwd_events.copy()
    fwd[:, 0, TPS] = np.minimum(fwd[:, 0, TPS], 0.0)
    return replace(p, saved=saved, fwd_events=fwd,
                   saved_terms=[t for t in p.saved_terms if t[1][TPS] == 0] + [("recomputed scores", 0 * dropped)])


def window_mask(model, seq_len):
    """Whether transformers materialises a sliding-window attention mask (the window is no
    longer than the sequence; layers_hf._needs_mask): a bool, or a bool column for a column
    of sequence lengths."""
    if not model.sliding_window:
        return np.zeros(np.shape(seq_len), bool) if is_array(seq_len) else False
    return seq_len >= model.sliding_window


@lru_cache(maxsize=512)
def model_profiles(model, act_kind: str, grad_bytes: int, attention: str, framework: str,
                   mask: bool, selective: bool, fp8: bool, lora=None) -> ModelProfiles:
    """Simulate the embedding, the dense and MoE layer kinds and the head of ``model``
    (``lora``: a core/lora.LoraSpec for LoRA/QLoRA fine-tuning)."""
    if selective and framework != "megatron":
        # Selective recomputation changes only what the layers keep: the profiles without it,
        # score terms dropped (one simulation less for the advice's and the search's variants)
        plain = model_profiles(model, act_kind, grad_bytes, attention, framework, mask, False, fp8, lora)
        return replace(plain, dense=_drop_score_terms(plain.dense) if plain.dense else None,
                       moe=_drop_score_terms(plain.moe) if plain.moe else None)
    seq_hint = 1 << 30 if mask else 1  # only decides whether a sliding-window mask exists
    spec = HFLayerSpec(act_kind, grad_bytes, attention, seq_hint, lora)
    dense = moe = None
    if framework == "megatron":
        if model.dense_mlp_layers:
            dense = simulate(*layers_megatron.megatron_layer(model, spec, False, fp8, selective))
        if model.moe_layers:
            moe = simulate(*layers_megatron.megatron_layer(model, spec, True, fp8, selective))
        embed = simulate(*layers_megatron.megatron_embedding(model, spec, fp8))
        head = simulate(*layers_megatron.megatron_head(model, spec, fp8))
        return ModelProfiles(embed, dense, moe, head, 0.0, False)
    if model.dense_mlp_layers:
        dense = simulate(*layers_hf.layer_trace(model, spec, moe_layer=False))
    if model.moe_layers:
        moe = simulate(*layers_hf.layer_trace(model, spec, moe_layer=True))
    embed = simulate(*layers_hf.embedding_trace(model, spec))
    head = simulate(*layers_hf.head_trace(model, spec))
    mask_bytes = 0.0
    if model.arch != "bert" and (attention == "eager" or mask):
        # masking_utils: eager gets a float mask in the embeddings' dtype, SDPA a bool mask
        fp32_embeddings = act_kind in ("fp32", "amp") or (lora is not None and lora.prepare)  # lp-amp: bf16
        mask_bytes = (4 if fp32_embeddings else 2) if attention == "eager" else 1
    return ModelProfiles(embed, dense, moe, head, mask_bytes, act_kind == "amp")


def weight_cast_bytes(p: LayerProfile) -> float:
    """Bytes of 16-bit weight copies a layer keeps for backward under autocast (slot W)."""
    return float(p.saved[W])

