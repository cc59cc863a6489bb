"""The search and scaling services: candidates from GPU or instance names, the default
global batch, and how a model is named in a row's ``estimate`` command."""
from __future__ import annotations

import math
import os

from planner_app.core.cost import DEFAULT_CNY_PER_USD
from planner_app.core.errors import InputError
from planner_app.core.search import Candidate, candidate_from_instance
from planner_app.service.resolve import resolve_hardware


def build_candidates(db, gpus: str | None, instances: str | None, fabric: str | None,
                     cny_per_usd: float = DEFAULT_CNY_PER_USD) -> list[Candidate]:
    out = []
    if instances:
        for name in [x.strip() for x in instances.split(",") if x.strip()]:
            hw, per_node, _ = resolve_hardware(db, instance=name, fabric=fabric)
            out.append(candidate_from_instance(name, hw, hw.instance, cny_per_usd))
    else:
        for name in [x.strip() for x in (gpus or "").split(",") if x.strip()]:
            hw, per_node, _ = resolve_hardware(db, gpu=name, fabric=fabric)
            out.append(Candidate(name=hw.gpu.name, hardware=hw, gpus_per_node=per_node))
    if not out:
        raise InputError("gpu", "give one or more GPUs (--gpu A,B) or instances (--instance X,Y)")
    return out


def default_global_batch(seq_len: int) -> int:
    """About 4M tokens per step, in a power-of-two number of sequences (Llama 3's 4M-token
    batches, Dubey et al. 2024 table 4)."""
    return 2 ** max(0, round(math.log2(4_000_000 / seq_len)))


def model_ref(text: str) -> str:
    """The model as an ``estimate`` command names it: a config file by its absolute path."""
    if text.endswith(".json") or os.path.sep in text or os.path.exists(text):
        return os.path.abspath(text)
    return text
