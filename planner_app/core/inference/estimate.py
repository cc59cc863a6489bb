"""One inference batch's estimate (``gpu-planner estimate --mode inference``): memory, prefill and
decode speed of a Hugging Face transformers run, and its cost per million tokens."""
from __future__ import annotations

from planner_app.core.hardware.fit import add_margin
from planner_app.core.hardware.machine import Hardware
from planner_app.core.inference.memory import inference_memory, largest_batch, longest_context
from planner_app.core.inference.timing import add_inference_time
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.training.estimate import Overrides
from planner_app.core.training.setup import InferenceSetup


def estimate_inference(model, hw: Hardware, setup: InferenceSetup, tp: int = 1,
                       overrides: Overrides | None = None) -> dict:
    cap = hw.gpu.capacity_bytes
    im = inference_memory(model, setup, tp, cap)
    out = {
        "mode": "inference",
        "model": {"name": model.name, "arch": model.arch, "summary": model.summary()},
        "params": {"total": model.params_total, "active": model.params_active},
        "gpu": {"id": hw.gpu.id, "name": hw.gpu.name, "memory_gb": hw.gpu.memory_gb, "capacity_bytes": cap,
                "source": hw.gpu.source, "retrieved": hw.gpu.retrieved},
        "parallel": {"tp": tp, "gpus": tp},
        "setup": {"batch": setup.batch, "prompt_len": setup.prompt_len, "new_tokens": setup.new_tokens,
                  "weights_dtype": setup.weights_dtype, "kv_dtype": setup.kv_dtype, "inference_api": setup.api},
        "memory": {"peak_bytes": im.peak_bytes, "breakdown": dict(im.breakdown), "fits": bool(im.fits),
                   "kv_cache_bytes": im.kv_cache_bytes, "kv_bytes_per_token": im.kv_bytes_per_token,
                   "device_bytes": im.device_bytes, "capacity_bytes": cap,
                   "largest_batch": largest_batch(model, setup, tp, cap),
                   "longest_context": longest_context(model, setup, tp, cap)},
        "assumptions": [
            Text(QT_TRANSLATE_NOOP("Engine", "KV cache holds K and V of every layer for prompt + generated tokens "
                                             "(grouped-query: KV heads only; MLA: the compressed latent)")),
            Text(QT_TRANSLATE_NOOP("Engine", "prefill peak as a hand-written model(input_ids) loop: logits for every "
                                             "prompt token in 16 bits")) if setup.api == "forward-loop" else
            Text(QT_TRANSLATE_NOOP("Engine", "prefill peak as transformers 5.x model.generate(): logits of the last "
                                             "token only (logits_to_keep=1), one layer's intermediates for the "
                                             "whole prompt")),
            Text(QT_TRANSLATE_NOOP("Engine", "weights in {dtype}; embeddings, output layer and norms in 16 bits"),
                 dtype=setup.weights_dtype),
        ],
    }
    add_margin(out["memory"])
    add_inference_time(out, model, hw, setup, tp, overrides or Overrides())
    return out
