"""One inference batch's estimate (``gpu-planner estimate --mode inference``): memory, prefill and
decode speed of a Hugging Face transformers run, and its cost per million tokens, as typed parts
with one serializer to the CLI contract's JSON."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner_app.core.hardware.fit import add_margin
from planner_app.core.hardware.machine import Hardware
from planner_app.core.inference.memory import (
    InferenceMemory,
    inference_memory,
    largest_batch,
    longest_context,
)
from planner_app.core.inference.setup import InferenceSetup
from planner_app.core.inference.timing import (
    CUDNN_SDPA_GRAPH_BUILD_S,
    inference_time,
    serving_engine_decode_s,
)
from planner_app.core.models.spec import ModelSpec
from planner_app.core.plans.cost import PriceChoice
from planner_app.core.results import check_quantities
from planner_app.core.text import QT_TRANSLATE_NOOP, Text


@dataclass(frozen=True)
class InferenceCost:
    """USD per million generated tokens and per hour of the batch's tp GPUs (their share of the
    instance), at the plan's price basis (``PriceChoice.hourly``); None without a price."""

    usd_per_million_tokens: float | None = None
    usd_per_hour: float | None = None
    usd_price_basis: str | None = None  # the price kind both are at (PRICE_KINDS)

    def __post_init__(self):
        check_quantities(self)

    def to_json(self) -> dict:
        if self.usd_per_hour is None:
            return {}
        return {"usd_per_million_tokens": self.usd_per_million_tokens, "usd_per_hour": self.usd_per_hour,
                "usd_price_basis": self.usd_price_basis}


@dataclass(frozen=True)
class InferenceEstimate:
    model: ModelSpec
    hardware: Hardware
    setup: InferenceSetup
    memory: InferenceMemory
    largest_batch: int
    longest_context: int
    time: dict  # core/inference/timing.inference_time's keys, the serving engine's step beside them
    cost: InferenceCost
    assumptions: tuple

    def __post_init__(self):
        check_quantities(self, positive=())

    def to_json(self) -> dict:
        model, hw, setup, im, cap = self.model, self.hardware, self.setup, self.memory, self.hardware.gpu.capacity_bytes
        out: dict[str, Any] = {
            "mode": "inference",
            "model": {"name": model.name, "arch": model.arch, "summary": model.summary()},
            "params": {"total": model.params_total, "active": model.params_active},
            "gpu": {"id": hw.gpu.id, "name": hw.gpu.name, "memory_gb": hw.gpu.memory_gb, "capacity_bytes": cap,
                    "source": hw.gpu.source, "retrieved": hw.gpu.retrieved},
            "parallel": {"tp": setup.tp, "gpus": setup.tp},
            "setup": {"batch": setup.batch, "prompt_len": setup.prompt_len, "new_tokens": setup.new_tokens,
                      "weights_dtype": setup.weights_dtype, "kv_dtype": setup.kv_dtype,
                      "inference_api": setup.inference_api},
            "memory": {"peak_bytes": im.peak_bytes, "breakdown": dict(im.breakdown), "fits": bool(im.fits),
                       "kv_cache_bytes": im.kv_cache_bytes, "kv_bytes_per_token": im.kv_bytes_per_token,
                       "device_bytes": im.device_bytes, "capacity_bytes": cap, "largest_batch": self.largest_batch,
                       "longest_context": self.longest_context},
            "assumptions": list(self.assumptions),
        }
        add_margin(out["memory"])
        out["time"] = dict(self.time)
        out["cost"] = self.cost.to_json()
        return out


def estimate_inference(model, hw: Hardware, setup: InferenceSetup, price: PriceChoice) -> InferenceEstimate:
    """The estimate of one resolved inference batch, priced as ``price`` says."""
    cap = hw.gpu.capacity_bytes
    im = inference_memory(model, setup, cap)
    a = [Text(QT_TRANSLATE_NOOP("Engine", "KV cache holds K and V of every layer for prompt + generated tokens "
                                          "(grouped-query: KV heads only; MLA: the compressed latent)")),
         Text(QT_TRANSLATE_NOOP("Engine", "prefill peak as a hand-written model(input_ids) loop: logits for every "
                                          "prompt token in 16 bits")) if setup.inference_api == "forward-loop" else
         Text(QT_TRANSLATE_NOOP("Engine", "prefill peak as transformers 5.x model.generate(): logits of the last "
                                          "token only (logits_to_keep=1), one layer's intermediates for the "
                                          "whole prompt")),
         Text(QT_TRANSLATE_NOOP("Engine", "weights in {dtype}; embeddings, output layer and norms in 16 bits"),
              dtype=setup.weights_dtype)]
    t = inference_time(model, hw, setup)
    t["tokens_per_s_per_gpu"] = t["decode_tokens_per_s"] / setup.tp
    a.append(Text(QT_TRANSLATE_NOOP(
        "Engine", "inference speed of Hugging Face transformers run eagerly ({api}): per token the slower of the "
                  "GPU (weights, the KV cache read by attention and copied again by DynamicCache) and the host "
                  "(one Python dispatch per op, {host_us:.0f} us each), at key lengths the process has met before"),
        api=setup.inference_api, host_us=hw.efficiency("pytorch").launch_s * 1e6))
    t["serving_engine_decode_s_per_token"] = serving_engine_decode_s(model, hw, setup)
    a.append(Text(QT_TRANSLATE_NOOP(
        "Engine", "for comparison, the time a serving engine (vLLM: CUDA graphs, fused kernels) takes per token for "
                  "the same batch on the same GPUs is given beside it; gpu-planner serve sizes it under load")))
    if t["decode_s_per_token_first_call"] > t["decode_s_per_token"]:
        a.append(Text(QT_TRANSLATE_NOOP(
            "Engine", "a call at new lengths is slower: SDPA's cuDNN backend (PyTorch's choice on this GPU) builds a "
                      "graph for every new key length, about {ms:.0f} ms more per token (the first-call time); later "
                      "calls at the same lengths run at the warm rate"), ms=CUDNN_SDPA_GRAPH_BUILD_S * 1e3))
    cost = InferenceCost()
    if hw.instance is not None:
        price_h, basis = price.hourly(hw.instance.prices)
        if price_h is not None:
            usd_per_gpu_hour = price_h / hw.instance.gpu_count
            cost = InferenceCost(usd_per_million_tokens=usd_per_gpu_hour * setup.tp
                                 / (t["decode_tokens_per_s"] * 3600) * 1e6, usd_per_hour=usd_per_gpu_hour * setup.tp,
                                 usd_price_basis=basis)
    return InferenceEstimate(model=model, hardware=hw, setup=setup, memory=im,
                             largest_batch=largest_batch(model, setup, cap),
                             longest_context=longest_context(model, setup, cap), time=t, cost=cost,
                             assumptions=tuple(a))
