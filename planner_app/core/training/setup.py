"""A training run as the engine takes it: its setup (what is constant in a run: sequence length,
batch, budget, precision recipe, optimizer, attention kernel, framework, fine-tuning) and its
parallel layout (what the configurations of a search vary: micro-batch, recomputation, every
parallel degree, ZeRO stage, pipeline schedule). Each field is an option (core/options.py): its
default, range, help and label are declared here once; the command line, scenario files, the GUI
and the report are built from them. ``Layout`` is the layout the formulas read, as numbers (one
estimate) or numpy columns (a search). Also the per-recipe byte tables."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from planner_app.core.arrays import minimum, where
from planner_app.core.errors import InputError
from planner_app.core.options import Option, check_fields, declare
from planner_app.core.text import QT_TRANSLATE_NOOP
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
MAX_DEGREE = 65536
LORA = ("lora", "qlora")

# Options more than one part declares the same way (one declaration, used where it applies).
ATTENTION = Option("choice", QT_TRANSLATE_NOOP("Options", "attention kernel (default: flash for megatron, sdpa "
                                                          "otherwise)"),
                   QT_TRANSLATE_NOOP("Options", "Attention"), choices=ATTENTIONS, auto=True, group="training")
TP = Option("int", QT_TRANSLATE_NOOP("Options", "tensor-parallel degree"), QT_TRANSLATE_NOOP("Options", "Tensor parallel"),
            minimum=1, maximum=MAX_DEGREE, scope="plan", group="layout")


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
    """What is constant in one training run (per model replica); defaults as Hugging Face Trainer,
    PEFT and PyTorch set them."""

    seq_len: int = declare(0, Option(
        "int", QT_TRANSLATE_NOOP("Options", "tokens per sequence (default: the preset's context used for training)"),
        QT_TRANSLATE_NOOP("Options", "Sequence length"), minimum=1, maximum=1 << 24, auto=True, group="training"))
    global_batch: int = declare(0, Option(
        "int", QT_TRANSLATE_NOOP("Options", "sequences per optimizer step across all GPUs (default: micro-batch x dp x "
                                            "ep)"),
        QT_TRANSLATE_NOOP("Options", "Global batch (sequences)"), minimum=1, maximum=1 << 30, auto=True,
        group="training"))
    tokens: float = declare(0.0, Option(
        "float", QT_TRANSLATE_NOOP("Options", "training budget in tokens"), QT_TRANSLATE_NOOP("Options", "Training tokens"),
        minimum=0.0, maximum=1e18, above_minimum=True, auto=True, group="training"))
    recipe: str = declare("", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "precision recipe (default: bf16 mixed precision the GPU supports, by "
                                               "framework)"),
        QT_TRANSLATE_NOOP("Options", "Precision recipe"), choices=RECIPES, auto=True, group="training"))
    optimizer: str = declare("adamw", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "optimizer (its states per parameter)"),
        QT_TRANSLATE_NOOP("Options", "Optimizer"), choices=OPTIMIZERS, group="training"))
    optimizer_impl: str = declare("fused", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "PyTorch AdamW implementation (--framework pytorch): fused (Hugging Face "
                                               "Trainer's default on PyTorch 2.8+, torchtitan), foreach (torch.optim's "
                                               "default) or forloop"),
        QT_TRANSLATE_NOOP("Options", "Optimizer implementation"), choices=OPTIMIZER_IMPLS, group="training"))
    attention: str = declare("", ATTENTION)
    framework: str = declare("pytorch", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "training framework (its buffers and overheads)"),
        QT_TRANSLATE_NOOP("Options", "Framework"), choices=FRAMEWORKS, group="training"))
    offload: str = declare("none", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "offload states to the CPU (ZeRO-Offload)"),
        QT_TRANSLATE_NOOP("Options", "Offload"), choices=OFFLOADS, group="training"))
    # LoRA / QLoRA as PEFT and bitsandbytes run them (core/training/lora.py); "full" trains every weight
    finetune: str = declare("full", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "what is trained: every weight (full), LoRA adapters on a frozen base "
                                               "(lora, PEFT), or LoRA on a 4-bit NF4 base (qlora, bitsandbytes)"),
        QT_TRANSLATE_NOOP("Options", "Fine-tuning"), choices=FINETUNES, group="lora"))
    lora_rank: int = declare(8, Option(  # PEFT LoraConfig's default r
        "int", QT_TRANSLATE_NOOP("Options", "LoRA rank r (default 8, PEFT's)"), QT_TRANSLATE_NOOP("Options", "LoRA rank"),
        minimum=1, maximum=65536, group="lora", requires=("finetune", LORA)))
    lora_targets: str = declare("", Option(  # "": PEFT's default for the model
        "text", QT_TRANSLATE_NOOP("Options", "modules LoRA adapts, as PEFT's target_modules: names separated by commas "
                                             "(q_proj,v_proj) or all-linear (default: PEFT's for the model)"),
        QT_TRANSLATE_NOOP("Options", "LoRA target modules"), auto=True, group="lora", requires=("finetune", LORA)))
    lora_dtype: str = declare("fp32", Option(  # PEFT keeps adapters in fp32 (autocast_adapter_dtype=True)
        "choice", QT_TRANSLATE_NOOP("Options", "LoRA adapter precision (default fp32: PEFT keeps adapters in fp32, "
                                               "autocast_adapter_dtype=True)"),
        QT_TRANSLATE_NOOP("Options", "LoRA adapter dtype"), choices=LORA_DTYPES, group="lora",
        requires=("finetune", LORA)))
    lora_dropout: float = declare(0.0, Option(  # PEFT LoraConfig's default
        "float", QT_TRANSLATE_NOOP("Options", "LoRA dropout probability (default 0, PEFT's)"),
        QT_TRANSLATE_NOOP("Options", "LoRA dropout"), minimum=0.0, maximum=0.999, group="lora",
        requires=("finetune", LORA)))
    qlora_prepare: bool = declare(False, Option(
        "bool", QT_TRANSLATE_NOOP("Options", "QLoRA with peft.prepare_model_for_kbit_training: fp32 embeddings, norms "
                                             "and output layer, gradient checkpointing on"),
        QT_TRANSLATE_NOOP("Options", "prepare_model_for_kbit_training"), group="lora", requires=("finetune", ("qlora",))))

    def __post_init__(self):
        check_fields(self)

    def lora(self, model):
        """The resolved LoRA/QLoRA spec for ``model`` (core/training/lora.py), or None for full fine-tuning."""
        if self.finetune == "full":
            return None
        return _lora_of(model, self)


@dataclass(frozen=True)
class ParallelPlan:
    """Degrees of every parallelism axis, and the per-configuration choices a search varies with
    them (micro-batch, recomputation). GPUs = tp x pp x cp x ep x dp (PRODUCT.md): ``ep`` splits
    the data-parallel replicas of the experts, so dense weights are replicated over dp x ep (x cp)
    ranks and experts over dp (x cp). ``gpus_per_node`` comes from the machine (resolved by the
    service), not from an option of the layout."""

    micro_batch: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "sequences per GPU per forward/backward pass"),
        QT_TRANSLATE_NOOP("Options", "Micro-batch"), minimum=1, maximum=1 << 20, group="training"))
    recompute: str = declare("none", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "activation recomputation"),
        QT_TRANSLATE_NOOP("Options", "Activation recomputation"), choices=RECOMPUTES, group="training"))
    tp: int = declare(1, TP)
    pp: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "pipeline-parallel degree"), QT_TRANSLATE_NOOP("Options", "Pipeline parallel"),
        minimum=1, maximum=MAX_DEGREE, scope="plan", group="layout"))
    dp: int = declare(0, Option(
        "int", QT_TRANSLATE_NOOP("Options", "data-parallel degree (default: GPUs / (tp x pp x cp x ep))"),
        QT_TRANSLATE_NOOP("Options", "Data parallel"), minimum=1, maximum=1 << 20, scope="plan", group="layout",
        auto=True))
    cp: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "context-parallel degree"), QT_TRANSLATE_NOOP("Options", "Context parallel"),
        minimum=1, maximum=MAX_DEGREE, scope="plan", group="layout"))
    ep: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "expert-parallel degree (MoE models)"),
        QT_TRANSLATE_NOOP("Options", "Expert parallel"), minimum=1, maximum=MAX_DEGREE, scope="plan", group="layout"))
    zero: int = declare(0, Option(
        "int", QT_TRANSLATE_NOOP("Options", "ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also "
                                            "parameters"),
        QT_TRANSLATE_NOOP("Options", "ZeRO stage"), minimum=0, maximum=3, scope="plan", group="layout",
        metavar="{0,1,2,3}"))
    # Hybrid sharding (HSDP): FSDP2's fully_shard over a 2-D (replicate, shard) DeviceMesh shards the
    # states within each group of dp_shard data-parallel ranks and replicates them across the
    # dp / dp_shard groups (torch.distributed.fsdp.fully_shard's mesh argument; torchtitan's
    # data_parallel_shard_degree). With fewer data-parallel ranks than dp_shard they form one
    # group, as FSDP1's HYBRID_SHARD shards within a node of at most that many ranks.
    # 0: one group of all data-parallel ranks (full sharding).
    dp_shard: int = declare(0, Option(
        "int", QT_TRANSLATE_NOOP("Options", "hybrid sharding (FSDP2 HSDP): ZeRO shards over groups of this many "
                                            "data-parallel ranks (all of them when there are fewer) and the groups "
                                            "hold replicas (default: all data-parallel ranks)"),
        QT_TRANSLATE_NOOP("Options", "Shard group (HSDP)"), minimum=1, maximum=1 << 20, scope="plan", group="layout",
        auto=True, requires=("zero", (1, 2, 3))))
    # FSDP2 fully_shard(reshard_after_forward=False) (FSDP1's SHARD_GRAD_OP): each layer keeps its
    # gathered parameters from its forward to its backward, which then all-gathers nothing
    # (torch/distributed/fsdp/_fully_shard/_fully_shard.py); the default reshards (True), as
    # torchtitan's and Accelerate's FULL_SHARD do.
    no_reshard_after_forward: bool = declare(False, Option(
        "bool", QT_TRANSLATE_NOOP("Options", "FSDP: keep each layer's gathered parameters from its forward to its "
                                             "backward (fully_shard reshard_after_forward=False, FSDP1 SHARD_GRAD_OP; "
                                             "needs --zero 3)"),
        QT_TRANSLATE_NOOP("Options", "Keep gathered parameters (no reshard after forward)"), scope="plan",
        group="layout", requires=("zero", (3,))))
    sequence_parallel: bool = declare(False, Option(
        "bool", QT_TRANSLATE_NOOP("Options", "Megatron sequence parallelism (needs --tp > 1)"),
        QT_TRANSLATE_NOOP("Options", "Sequence parallel"), scope="plan", group="layout"))
    pp_schedule: str = declare("1f1b", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "pipeline schedule"), QT_TRANSLATE_NOOP("Options", "Pipeline schedule"),
        choices=PP_SCHEDULES, scope="plan", group="layout"))
    vp: int = declare(2, Option(
        "int", QT_TRANSLATE_NOOP("Options", "virtual stages per rank (interleaved)"),
        QT_TRANSLATE_NOOP("Options", "Virtual stages"), minimum=1, maximum=1024, scope="plan", group="layout"))
    gpus_per_node: int = 8  # the machine's (the service resolves it), not an option of the layout

    def __post_init__(self):
        check_fields(self)

    @property
    def gpus(self):
        return self.tp * self.pp * self.cp * self.ep * self.dp

    @property
    def nodes(self) -> int:
        return math.ceil(self.gpus / self.gpus_per_node)


RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2}


@dataclass(frozen=True)
class Layout(ParallelPlan):
    """The layout the engine's formulas read: a ParallelPlan's fields (every one, so a new axis
    reaches the formulas without a signature change) as Python numbers for one estimate or as
    equal-length numpy columns for a search, with the setup's sequence length and the micro-batches
    per optimizer step, and what follows from them. ``recompute`` and ``pp_schedule`` may be codes
    (RECOMPUTE_CODES, 0/1) in columns. Built by ``Layout.of`` (one plan) or a search's enumeration;
    never checked again (its plan was)."""

    seq_len: Any = None  # the setup's (Layout.of), or a column
    n_acc: Any = 1

    def __post_init__(self):
        pass  # a ParallelPlan checked its values; columns come from a search's own enumeration

    @classmethod
    def of(cls, setup: TrainingSetup, plan: ParallelPlan) -> Layout:
        """The layout of one configuration: ``plan`` with ``setup``'s sequence length and accumulation."""
        kw = {f.name: getattr(plan, f.name) for f in fields(ParallelPlan)}
        return cls(**kw, seq_len=setup.seq_len, n_acc=grad_accum_steps(setup, plan))

    @cached_property
    def selective(self):
        return _is(self.recompute, "selective")

    @cached_property
    def ckpt(self):
        return _is(self.recompute, "full")

    @cached_property
    def interleaved(self):
        s = self.pp_schedule
        return s == "interleaved" if isinstance(s, str) else np.asarray(s).astype(bool) if np.ndim(s) else bool(s)

    @cached_property
    def d_dense(self):
        """Ranks holding the same dense weights."""
        return self.dp * self.ep * self.cp

    @cached_property
    def d_exp(self):
        """Ranks holding the same experts."""
        return self.dp * self.cp

    @cached_property
    def shard(self):
        """Data-parallel ranks one shard group spans: dp_shard under hybrid sharding, else all of them."""
        return where(self.dp_shard > 0, minimum(self.dp_shard, self.dp), self.dp)

    @cached_property
    def replicas(self):
        """Shard groups holding the same states (HSDP's replicate dimension; 1 under full sharding)."""
        return self.dp // self.shard

    @cached_property
    def s_dense(self):
        """Ranks the dense weights' ZeRO shards are spread over (d_dense under full sharding)."""
        return self.shard * self.ep * self.cp

    @cached_property
    def s_exp(self):
        """Ranks the experts' ZeRO shards are spread over (d_exp under full sharding)."""
        return self.shard * self.cp

    @cached_property
    def tokens(self):
        """Tokens per micro-batch and GPU."""
        return self.micro_batch * self.seq_len / self.cp

    @cached_property
    def grads_present(self):
        """Gradients accumulate across micro-batches (accumulation steps, pipeline micro-batches)."""
        return (self.n_acc > 1) | (self.pp > 1)

    @cached_property
    def recompute_code(self):
        r = self.recompute
        return RECOMPUTE_CODES[r] if isinstance(r, str) else r


def _is(value, name: str):
    """``value`` (a recompute mode, its code, or a column of either) is ``name``."""
    if isinstance(value, str):
        return value == name
    if np.ndim(value) and np.asarray(value).dtype == object:
        return np.asarray(value) == name
    return value == RECOMPUTE_CODES[name]


_lora_of = lru_cache(maxsize=256)(resolve_lora)


def validate_plan_for_model(model, setup: TrainingSetup, plan: ParallelPlan) -> None:
    """Checks that need both the model and the layout; raises InputError naming the option."""
    if setup.lora(model) is not None:
        if setup.offload != "none":
            raise InputError("offload", "LoRA and QLoRA are modelled without ZeRO-Offload; use offload none")
        if setup.optimizer == "adafactor":
            raise InputError("optimizer", "Adafactor over LoRA adapters is not modelled; use adamw, adam, sgd, "
                                          "sgd-momentum or adamw-8bit")
    if plan.dp < 1:
        raise InputError("dp", "is not resolved: give dp or the GPU count")
    if plan.dp_shard:
        if plan.dp > plan.dp_shard and plan.dp % plan.dp_shard:
            raise InputError("dp_shard", f"must divide the data-parallel degree ({plan.dp}); got {plan.dp_shard}")
        if plan.ep > 1:
            raise InputError("dp_shard", "hybrid sharding with expert parallelism is not modelled; use ep 1, or "
                                         "leave dp_shard out")
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
        per_step = plan.micro_batch * plan.dp * plan.ep
        if setup.global_batch % per_step:
            raise InputError("global_batch", f"must be a multiple of micro-batch x data-parallel degree "
                                             f"({plan.micro_batch} x {plan.dp * plan.ep} = {per_step}); "
                                             f"got {setup.global_batch}")


def grad_accum_steps(setup: TrainingSetup, plan) -> int:
    """Micro-batches per optimizer step on each data-parallel rank (``plan``: a ParallelPlan, or columns)."""
    if not setup.global_batch:
        return 1
    return max(1, setup.global_batch // (plan.micro_batch * plan.dp * plan.ep))
