"""Training and inference setups, the parallel layout, and the per-recipe byte tables."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from planner_app.core.errors import InputError, require_choice, require_float, require_int
from planner_app.core.training.lora import FINETUNES, LORA_DTYPES, resolve_lora

RECIPES = ("fp32", "amp-bf16", "amp-fp16", "bf16", "bf16-autocast", "mixed-bf16", "fp8")
OPTIMIZERS = ("adamw", "adam", "sgd", "sgd-momentum", "adafactor", "adamw-8bit", "adamw-8bit-paged")
# bitsandbytes' paged optimizers keep their states in CUDA managed (unified) memory, which pages to
# the host when the GPU runs out (bitsandbytes docs, "Paged optimizers"): outside PyTorch's
# allocator, so outside torch.cuda.max_memory_allocated, and never the cause of an out-of-memory.
PAGED_OPTIMIZERS = ("adamw-8bit-paged",)
ATTENTIONS = ("flash", "sdpa", "eager")
RECOMPUTES = ("none", "selective", "full")
FRAMEWORKS = ("pytorch", "megatron", "deepspeed")
OFFLOADS = ("none", "optimizer", "params")
PP_SCHEDULES = ("1f1b", "interleaved")
# PyTorch's AdamW implementations (torch/optim/adam.py, adamw.py): fused=True (_fused_adamw_:
# one kernel, no temporaries; Hugging Face Trainer's default "adamw_torch_fused" on PyTorch
# >= 2.8, transformers/training_args.py), foreach=True (_multi_tensor_adam: torch.optim's
# default when fused is not asked for) and foreach=False (_single_tensor_adam, per tensor).
OPTIMIZER_IMPLS = ("fused", "foreach", "forloop")
WEIGHT_DTYPES = ("bf16", "fp16", "fp8", "int8", "int4")
# How one inference batch is run: Hugging Face model.generate() (transformers 5.x computes the
# prefill's logits for the last position only, logits_to_keep=1) or a hand-written loop calling
# model(input_ids) (logits for every prompt token).
INFERENCE_APIS = ("generate", "forward-loop")
KV_DTYPES = ("bf16", "fp16", "fp8")


@dataclass(frozen=True)
class RecipeBytes:
    """Bytes per parameter of each model state, and how activations are computed.

    ``act_kind``: ``fp32`` (everything fp32), ``amp`` (fp32 parameters, autocast to 16-bit
    GEMMs), ``lp`` (16-bit parameters and activations), ``lp-amp`` (16-bit parameters with the
    forward under autocast: its fp32 list, e.g. layer_norm, runs in fp32).
    """

    param: int
    grad: int
    master: int
    state: int
    act_kind: str
    gemm_bits: int  # precision of the GEMMs (32, 16 or 8): picks the peak TFLOPS


def recipe_bytes(recipe: str, framework: str) -> RecipeBytes:
    """Byte table per recipe (PRODUCT.md's definitions).

    ZeRO paper (Rajbhandari et al. 2020, sec. 3.1): mixed precision keeps 2+2 bytes of
    fp16 parameters and gradients plus K = 12 bytes of fp32 master weights, momentum and
    variance. Megatron-LM accumulates gradients in an fp32 ``main_grad`` buffer
    (``--accumulate-allreduce-grads-in-fp32``, on for bf16), hence 4 gradient bytes there.
    """
    if recipe == "fp32":
        return RecipeBytes(4, 4, 0, 4, "fp32", 32)
    if recipe in ("amp-bf16", "amp-fp16"):
        return RecipeBytes(4, 4, 0, 4, "amp", 16)
    if recipe == "bf16":
        return RecipeBytes(2, 2, 0, 2, "lp", 16)
    if recipe == "bf16-autocast":  # bf16 weights, forward under torch.autocast: Trainer(bf16=True) on a bf16 model
        return RecipeBytes(2, 2, 0, 2, "lp-amp", 16)
    grad = 4 if framework == "megatron" else 2
    if recipe == "mixed-bf16":
        return RecipeBytes(2, grad, 4, 4, "lp", 16)
    if recipe == "fp8":
        return RecipeBytes(2, grad, 4, 4, "lp", 8)
    raise InputError("recipe", f"must be one of {', '.join(RECIPES)}; got {recipe!r}")


def optimizer_state_bytes_per_param(optimizer: str, state_bytes: int) -> float:
    """Optimizer-state bytes per parameter (excluding master weights).

    Adam/AdamW: two moments (Kingma & Ba 2015). SGD with momentum: one buffer.
    8-bit AdamW (Dettmers et al. 2022, bitsandbytes): two 1-byte states plus one fp32
    absmax per 2048-element block for each. Adafactor is factored per matrix and is
    computed from the model's shapes in ``memory.py``.
    """
    if optimizer in ("adam", "adamw"):
        return 2.0 * state_bytes
    if optimizer == "sgd-momentum":
        return 1.0 * state_bytes
    if optimizer == "sgd":
        return 0.0
    if optimizer in ("adamw-8bit", "adamw-8bit-paged"):
        return 2.0 + 2.0 * 4 / 2048
    if optimizer == "adafactor":
        return 0.0  # factored: see memory.adafactor_state_bytes
    raise InputError("optimizer", f"must be one of {', '.join(OPTIMIZERS)}; got {optimizer!r}")


@dataclass(frozen=True)
class TrainingSetup:
    """How one training step runs (per model replica)."""

    micro_batch: int = 1
    seq_len: int = 2048
    global_batch: int = 0  # sequences per optimizer step; 0: micro_batch x data-parallel degree
    tokens: float = 0.0  # training budget in tokens; 0: none
    recipe: str = "bf16"
    optimizer: str = "adamw"
    attention: str = "sdpa"
    recompute: str = "none"
    framework: str = "pytorch"
    offload: str = "none"
    # the engine's own default stays foreach (the measured runs of tests/data/training_runs_h200.json
    # used it); the CLI, GUI and scenario default is fused (service/options.py), as Trainer's
    optimizer_impl: str = "foreach"
    # LoRA / QLoRA as PEFT and bitsandbytes run them (core/training/lora.py); "full" trains every weight
    finetune: str = "full"
    lora_rank: int = 8  # PEFT LoraConfig's default r
    lora_targets: str = ""  # module names, comma-separated, or "all-linear"; "": PEFT's default for the model
    lora_dtype: str = "fp32"  # PEFT keeps adapters in fp32 (autocast_adapter_dtype=True)
    lora_dropout: float = 0.0  # PEFT LoraConfig's default
    qlora_prepare: bool = False  # peft.prepare_model_for_kbit_training

    def __post_init__(self):
        require_int("micro_batch", self.micro_batch, 1)
        require_int("seq_len", self.seq_len, 1)
        require_int("global_batch", self.global_batch, 0)
        require_float("tokens", self.tokens, 0.0)
        require_choice("recipe", self.recipe, RECIPES)
        require_choice("optimizer", self.optimizer, OPTIMIZERS)
        require_choice("attention", self.attention, ATTENTIONS)
        require_choice("recompute", self.recompute, RECOMPUTES)
        require_choice("framework", self.framework, FRAMEWORKS)
        require_choice("offload", self.offload, OFFLOADS)
        require_choice("optimizer_impl", self.optimizer_impl, OPTIMIZER_IMPLS)
        require_choice("finetune", self.finetune, FINETUNES)
        require_int("lora_rank", self.lora_rank, 1)
        require_choice("lora_dtype", self.lora_dtype, LORA_DTYPES)
        require_float("lora_dropout", self.lora_dropout, 0.0, 0.999)

    def lora(self, model):
        """The resolved LoRA/QLoRA spec for ``model`` (core/training/lora.py), or None for full fine-tuning."""
        if self.finetune == "full":
            return None
        return _lora_of(model, self.finetune, self.lora_rank, self.lora_targets, self.lora_dtype, self.lora_dropout,
                        self.qlora_prepare, self.recipe, self.framework)

    def with_changes(self, **changes) -> "TrainingSetup":
        return replace(self, **changes)


@dataclass(frozen=True)
class ParallelPlan:
    """Degrees of every parallelism axis. GPUs = tp x pp x cp x ep x dp (PRODUCT.md): ``ep``
    splits the data-parallel replicas of the experts, so dense weights are replicated over
    dp x ep (x cp) ranks and experts over dp (x cp)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    cp: int = 1
    ep: int = 1
    zero: int = 0
    sequence_parallel: bool = False
    pp_schedule: str = "1f1b"
    vp: int = 2  # virtual stages per pipeline rank under the interleaved schedule
    gpus_per_node: int = 8

    def __post_init__(self):
        for f in ("tp", "pp", "dp", "cp", "ep", "vp", "gpus_per_node"):
            require_int(f, getattr(self, f), 1)
        require_int("zero", self.zero, 0, 3)
        require_choice("pp_schedule", self.pp_schedule, PP_SCHEDULES)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.cp * self.ep * self.dp

    @property
    def dense_replicas(self) -> int:
        """Ranks holding a copy of the same dense weights (ZeRO shards over these)."""
        return self.dp * self.ep * self.cp

    @property
    def expert_replicas(self) -> int:
        return self.dp * self.cp

    @property
    def nodes(self) -> int:
        return math.ceil(self.gpus / self.gpus_per_node)

    def with_changes(self, **changes) -> "ParallelPlan":
        return replace(self, **changes)


_lora_of = lru_cache(maxsize=256)(resolve_lora)


def validate_plan_for_model(model, setup: TrainingSetup, plan: ParallelPlan) -> None:
    """Checks that need both the model and the layout; raises InputError naming the option."""
    if setup.lora(model) is not None:
        if setup.offload != "none":
            raise InputError("offload", "LoRA and QLoRA are modelled without ZeRO-Offload; use --offload none")
        if setup.optimizer == "adafactor":
            raise InputError("optimizer", "Adafactor over LoRA adapters is not modelled; use adamw, adam, sgd, "
                                          "sgd-momentum or adamw-8bit")
    if not model.is_transformer:
        if plan.tp > 1 or plan.pp > 1 or plan.cp > 1 or plan.ep > 1:
            raise InputError("tp", "a non-transformer model supports only data parallelism (tp, pp, cp, ep = 1)")
        return
    if model.heads % plan.tp:
        raise InputError("tp", f"must divide the number of attention heads ({model.heads}); got {plan.tp}")
    if plan.tp > model.kv_heads and plan.tp % model.kv_heads:
        raise InputError("tp", f"must divide or be a multiple of the KV heads ({model.kv_heads}); got {plan.tp}")
    if plan.pp > model.layers:
        raise InputError("pp", f"must be at most the number of layers ({model.layers}); got {plan.pp}")
    if plan.pp_schedule == "interleaved" and plan.pp > 1 and model.layers < plan.pp * plan.vp:
        raise InputError("vp", f"interleaving needs pp x vp <= layers ({model.layers}); got {plan.pp} x {plan.vp}")
    if plan.ep > 1 and not model.is_moe:
        raise InputError("ep", "expert parallelism needs a mixture-of-experts model; use ep 1")
    if model.is_moe and model.experts % plan.ep:
        raise InputError("ep", f"must divide the number of experts ({model.experts}); got {plan.ep}")
    if plan.cp > 1 and setup.seq_len % (2 * plan.cp):
        raise InputError("cp", f"context parallelism needs seq-len divisible by 2 x cp ({2 * plan.cp}); "
                               f"got seq-len {setup.seq_len}")
    if plan.sequence_parallel and plan.tp == 1:
        raise InputError("sequence_parallel", "needs tensor parallelism (tp > 1)")
    if setup.framework == "megatron" and setup.recipe in ("fp32", "amp-bf16", "amp-fp16", "bf16-autocast"):
        raise InputError("recipe", "the megatron framework trains with bf16, mixed-bf16 or fp8 (no fp32 weights "
                                   f"or autocast); got {setup.recipe}")
    if setup.global_batch:
        per_step = setup.micro_batch * plan.dp * plan.ep
        if setup.global_batch % per_step:
            raise InputError("global_batch", f"must be a multiple of micro-batch x data-parallel degree "
                                             f"({setup.micro_batch} x {plan.dp * plan.ep} = {per_step}); "
                                             f"got {setup.global_batch}")


def grad_accum_steps(setup: TrainingSetup, plan: ParallelPlan) -> int:
    """Micro-batches per optimizer step on each data-parallel rank."""
    per_step = setup.micro_batch * plan.dp * plan.ep
    if not setup.global_batch:
        return 1
    return max(1, setup.global_batch // per_step)


@dataclass(frozen=True)
class InferenceSetup:
    """A serving workload: batch of concurrent sequences, prompt and generated lengths."""

    batch: int = 1
    prompt_len: int = 1024
    new_tokens: int = 128
    weights_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    attention: str = "flash"
    api: str = "forward-loop"  # the engine's own default; the CLI/GUI default is generate (service/options.py)

    def __post_init__(self):
        require_int("batch", self.batch, 1)
        require_int("prompt_len", self.prompt_len, 1)
        require_int("new_tokens", self.new_tokens, 1)
        require_choice("weights_dtype", self.weights_dtype, WEIGHT_DTYPES)
        require_choice("kv_dtype", self.kv_dtype, KV_DTYPES)
        require_choice("attention", self.attention, ATTENTIONS)
        require_choice("inference_api", self.api, INFERENCE_APIS)

    @property
    def context_len(self) -> int:
        return self.prompt_len + self.new_tokens


WEIGHT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
KV_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0}
