"""One inference batch as the engine takes it (``gpu-planner estimate --mode inference``): concurrent
sequences, prompt and generated lengths, precisions, how transformers runs it, and the tensor-parallel
GPUs it runs on. Each field is an option (core/options.py)."""
from __future__ import annotations

from dataclasses import dataclass

from planner_app.core.options import Option, check_fields, declare
from planner_app.core.text import QT_TRANSLATE_NOOP
from planner_app.core.training.setup import ATTENTION, TP

WEIGHT_DTYPES = ("bf16", "fp16", "fp8", "int8", "int4")
KV_DTYPES = ("bf16", "fp16", "fp8")
# How one inference batch is run: Hugging Face model.generate() (transformers 5.x computes the
# prefill's logits for the last position only, logits_to_keep=1) or a hand-written loop calling
# model(input_ids) (logits for every prompt token).
INFERENCE_APIS = ("generate", "forward-loop")
WEIGHT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
KV_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0}


@dataclass(frozen=True)
class InferenceSetup:
    """A batch of concurrent sequences through ``model.generate()`` (or a hand-written loop) on ``tp``
    GPUs of one node."""

    batch: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "inference: concurrent sequences"),
        QT_TRANSLATE_NOOP("Options", "Concurrent sequences"), minimum=1, maximum=1 << 20, group="inference"))
    prompt_len: int = declare(1024, Option(
        "int", QT_TRANSLATE_NOOP("Options", "inference: prompt tokens per sequence"),
        QT_TRANSLATE_NOOP("Options", "Prompt length (tokens)"), minimum=1, maximum=1 << 24, group="inference"))
    new_tokens: int = declare(128, Option(
        "int", QT_TRANSLATE_NOOP("Options", "inference: generated tokens per sequence"),
        QT_TRANSLATE_NOOP("Options", "New tokens per request"), minimum=1, maximum=1 << 24, group="inference"))
    inference_api: str = declare("generate", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "inference: how the batch is run: Hugging Face model.generate() "
                                               "(transformers 5.x keeps the prefill's logits for the last token only) "
                                               "or a hand-written model(input_ids) loop (logits for every prompt "
                                               "token)"),
        QT_TRANSLATE_NOOP("Options", "Inference API"), choices=INFERENCE_APIS, group="inference"))
    weights_dtype: str = declare("bf16", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "inference: weight precision"), QT_TRANSLATE_NOOP("Options", "Weights"),
        choices=WEIGHT_DTYPES, group="inference"))
    kv_dtype: str = declare("bf16", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "inference: KV-cache precision"), QT_TRANSLATE_NOOP("Options", "KV cache"),
        choices=KV_DTYPES, group="inference"))
    attention: str = declare("", ATTENTION)
    tp: int = declare(1, TP)

    def __post_init__(self):
        check_fields(self)

    @property
    def context_len(self) -> int:
        return self.prompt_len + self.new_tokens
