"""Every estimate option, declared once: its key (the CLI's argparse dest, the scenario's key,
the GUI's field), type, default, allowed values or range, unit, help text, where it lives in
a scenario (workload or plan) and the modes it applies to. Built from this table: the
defaults (``OPTION_DEFAULTS``), the mode rules (an option of the other mode is an error), the
command-line arguments with their help and defaults (``add_arguments``), and the one check
every entry path runs (``check_options``: CLI, scenario files, the GUI's plans, reports).

A new option is one ``Option(...)`` here plus its formula in the engine."""
from __future__ import annotations

import math
from dataclasses import dataclass

from planner_app.core.errors import InputError
from planner_app.core.plans.cost import PRICE_KINDS
from planner_app.core.serving.engine import ENGINE_NAMES, GPU_MEMORY_UTILIZATION, SERVE_KV_DTYPES, SERVE_WEIGHT_DTYPES
from planner_app.core.text import QT_TRANSLATE_NOOP
from planner_app.core.training.lora import FINETUNES, LORA_DTYPES
from planner_app.core.training.setup import (
    ATTENTIONS,
    FRAMEWORKS,
    INFERENCE_APIS,
    KV_DTYPES,
    OFFLOADS,
    OPTIMIZER_IMPLS,
    OPTIMIZERS,
    PP_SCHEDULES,
    RECIPES,
    RECOMPUTES,
    WEIGHT_DTYPES,
)

BOTH = ("training", "inference")
TRAINING = ("training",)
INFERENCE = ("inference",)
# Whole-number options are capped where a larger value cannot describe a real plan (and where
# Python's int would otherwise carry a 400-digit number into the engine).
MAX_GPUS = 1 << 20
MAX_TEXT = 4096


@dataclass(frozen=True)
class Option:
    key: str
    kind: str  # "int" | "float" | "choice" | "bool" | "text" | "model"
    help: str
    default: object = None
    choices: tuple = ()
    minimum: float | None = None  # inclusive, unless above_minimum
    maximum: float | None = None  # inclusive
    above_minimum: bool = False  # the value must be > minimum (positive numbers)
    unit: str = ""
    scope: str = "workload"  # where a scenario keeps it: "workload", "plan" or "scenario"
    modes: tuple = BOTH
    metavar: str | None = None
    label: str = ""  # its name in the GUI's forms and the report's inputs table (translated: "Options" context)

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")

    def rule(self) -> str:
        """What is allowed, in words (the end of every error message about this option)."""
        if self.kind == "choice":
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.kind == "bool":
            return "true or false"
        if self.kind in ("text", "model"):
            return f"text of at most {MAX_TEXT} characters"
        what = "a whole number" if self.kind == "int" else "a number"
        num = (lambda v: f"{int(v):,}") if self.kind == "int" else (lambda v: f"{v:g}")
        if self.minimum is not None and self.maximum is not None:
            lo = f"above {num(self.minimum)}" if self.above_minimum else f"from {num(self.minimum)}"
            return f"{what} {lo} to {num(self.maximum)}"
        if self.minimum is not None:
            return f"{what} {'above' if self.above_minimum else 'of at least'} {num(self.minimum)}"
        return what


def _int(key, help, default=None, lo=1, hi=MAX_GPUS, **kw) -> Option:
    return Option(key, "int", help, default, minimum=lo, maximum=hi, **kw)


def _pos(key, help, default=None, hi=1e30, **kw) -> Option:
    return Option(key, "float", help, default, minimum=0.0, maximum=hi, above_minimum=True, **kw)


def _choice(key, help, choices, default=None, **kw) -> Option:
    return Option(key, "choice", help, default, choices=tuple(choices), **kw)


# Labels and help texts are written inside QT_TRANSLATE_NOOP("Options", ...) so that lupdate extracts
# them: the GUI shows them translated (ui/fields.py: option_label, option_tooltip), the CLI in English.
OPTIONS: tuple[Option, ...] = (
    Option("model", "model", QT_TRANSLATE_NOOP("Options", "preset name (gpu-planner models) or a config.json path"),
           label=QT_TRANSLATE_NOOP("Options", "Model")),
    Option("mode", "choice", QT_TRANSLATE_NOOP("Options", "training, or one inference batch (serving under load: "
                                                           "gpu-planner serve)"),
           "training", choices=("training", "inference"), label=QT_TRANSLATE_NOOP("Options", "Mode")),
    Option("gpu", "text", QT_TRANSLATE_NOOP("Options", "GPU name or id (gpu-planner specs gpus)"), scope="plan",
           label=QT_TRANSLATE_NOOP("Options", "GPU")),
    Option("instance", "text", QT_TRANSLATE_NOOP("Options", "cloud instance id (gpu-planner specs instances)"),
           scope="plan", label=QT_TRANSLATE_NOOP("Options", "Instance")),
    _int("gpus", QT_TRANSLATE_NOOP("Options", "total GPUs (default tp*pp*cp*ep*dp)"), scope="plan",
         label=QT_TRANSLATE_NOOP("Options", "GPUs")),
    _int("gpus_per_node", QT_TRANSLATE_NOOP("Options", "GPUs in one node (default: the instance's, else 8)"), hi=1024,
         scope="plan", label=QT_TRANSLATE_NOOP("Options", "GPUs per node")),
    _int("micro_batch", QT_TRANSLATE_NOOP("Options", "sequences per GPU per forward/backward pass"), 1, hi=1 << 20,
         modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Micro-batch")),
    _int("seq_len", QT_TRANSLATE_NOOP("Options", "tokens per sequence (default: the preset's context used for "
                                                 "training)"), hi=1 << 24,
         label=QT_TRANSLATE_NOOP("Options", "Sequence length")),
    _int("global_batch", QT_TRANSLATE_NOOP("Options", "sequences per optimizer step across all GPUs (default: "
                                                      "micro-batch x dp x ep)"),
         hi=1 << 30, modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Global batch (sequences)")),
    _pos("tokens", QT_TRANSLATE_NOOP("Options", "training budget in tokens"), hi=1e18, modes=TRAINING,
         label=QT_TRANSLATE_NOOP("Options", "Training tokens")),
    _choice("recipe", QT_TRANSLATE_NOOP("Options", "precision recipe (default: bf16 mixed precision the GPU "
                                                   "supports, by framework)"), RECIPES,
            modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Precision recipe")),
    _choice("optimizer", QT_TRANSLATE_NOOP("Options", "optimizer (its states per parameter)"), OPTIMIZERS, "adamw",
            modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Optimizer")),
    _choice("optimizer_impl", QT_TRANSLATE_NOOP("Options", "PyTorch AdamW implementation (--framework pytorch): "
                                                           "fused (Hugging Face Trainer's default on PyTorch 2.8+, "
                                                           "torchtitan), foreach (torch.optim's default) or forloop"),
            OPTIMIZER_IMPLS, "fused", modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Optimizer implementation")),
    _choice("finetune", QT_TRANSLATE_NOOP("Options", "what is trained: every weight (full), LoRA adapters on a frozen "
                                                     "base (lora, PEFT), or LoRA on a 4-bit NF4 base (qlora, "
                                                     "bitsandbytes)"),
            FINETUNES, "full", modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Fine-tuning")),
    _int("lora_rank", QT_TRANSLATE_NOOP("Options", "LoRA rank r (default 8, PEFT's)"), hi=65536, modes=TRAINING,
         label=QT_TRANSLATE_NOOP("Options", "LoRA rank")),
    Option("lora_targets", "text", QT_TRANSLATE_NOOP("Options", "modules LoRA adapts, as PEFT's target_modules: names "
                                                                "separated by commas (q_proj,v_proj) or all-linear "
                                                                "(default: PEFT's for the model)"),
           modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "LoRA target modules")),
    _choice("lora_dtype", QT_TRANSLATE_NOOP("Options", "LoRA adapter precision (default fp32: PEFT keeps adapters in "
                                                       "fp32, autocast_adapter_dtype=True)"), LORA_DTYPES,
            modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "LoRA adapter dtype")),
    Option("lora_dropout", "float", QT_TRANSLATE_NOOP("Options", "LoRA dropout probability (default 0, PEFT's)"),
           minimum=0.0, maximum=0.999, modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "LoRA dropout")),
    Option("qlora_prepare", "bool", QT_TRANSLATE_NOOP("Options", "QLoRA with peft.prepare_model_for_kbit_training: "
                                                                 "fp32 embeddings, norms and output layer, gradient "
                                                                 "checkpointing on"),
           False, modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "prepare_model_for_kbit_training")),
    _choice("attention", QT_TRANSLATE_NOOP("Options", "attention kernel (default: flash for megatron, sdpa "
                                                      "otherwise)"), ATTENTIONS,
            label=QT_TRANSLATE_NOOP("Options", "Attention")),
    _choice("recompute", QT_TRANSLATE_NOOP("Options", "activation recomputation"), RECOMPUTES, "none", modes=TRAINING,
            label=QT_TRANSLATE_NOOP("Options", "Activation recomputation")),
    _int("tp", QT_TRANSLATE_NOOP("Options", "tensor-parallel degree"), hi=65536, scope="plan",
         label=QT_TRANSLATE_NOOP("Options", "Tensor parallel")),
    _int("pp", QT_TRANSLATE_NOOP("Options", "pipeline-parallel degree"), hi=65536, scope="plan",
         label=QT_TRANSLATE_NOOP("Options", "Pipeline parallel")),
    _int("dp", QT_TRANSLATE_NOOP("Options", "data-parallel degree (default: GPUs / (tp x pp x cp x ep))"),
         scope="plan", modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Data parallel")),
    _int("cp", QT_TRANSLATE_NOOP("Options", "context-parallel degree"), hi=65536, scope="plan", modes=TRAINING,
         label=QT_TRANSLATE_NOOP("Options", "Context parallel")),
    _int("ep", QT_TRANSLATE_NOOP("Options", "expert-parallel degree (MoE models)"), hi=65536, scope="plan",
         label=QT_TRANSLATE_NOOP("Options", "Expert parallel")),
    _int("vp", QT_TRANSLATE_NOOP("Options", "virtual stages per rank (interleaved)"), 2, hi=1024, scope="plan",
         modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Virtual stages")),
    _int("zero", QT_TRANSLATE_NOOP("Options", "ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also "
                                              "parameters"), 0, lo=0, hi=3,
         scope="plan", modes=TRAINING, metavar="{0,1,2,3}", label=QT_TRANSLATE_NOOP("Options", "ZeRO stage")),
    Option("sequence_parallel", "bool", QT_TRANSLATE_NOOP("Options", "Megatron sequence parallelism (needs --tp > 1)"),
           False, scope="plan", modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Sequence parallel")),
    _choice("pp_schedule", QT_TRANSLATE_NOOP("Options", "pipeline schedule"), PP_SCHEDULES, "1f1b", scope="plan",
            modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Pipeline schedule")),
    _choice("offload", QT_TRANSLATE_NOOP("Options", "offload states to the CPU (ZeRO-Offload)"), OFFLOADS, "none",
            modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Offload")),
    _choice("framework", QT_TRANSLATE_NOOP("Options", "training framework (its buffers and overheads)"), FRAMEWORKS,
            "pytorch", label=QT_TRANSLATE_NOOP("Options", "Framework")),
    Option("fabric", "text", QT_TRANSLATE_NOOP("Options", "inter-node network id (gpu-planner specs fabrics; default: "
                                                          "the instance's, else InfiniBand NDR)"), scope="plan",
           label=QT_TRANSLATE_NOOP("Options", "Network")),
    _int("nics_per_node", QT_TRANSLATE_NOOP("Options", "network adapters per node (default: the instance's, else one "
                                                       "per GPU)"), hi=1024,
         scope="plan", label=QT_TRANSLATE_NOOP("Options", "NICs per node")),
    # The overrides set the training step time (inference has its own speed model, which they
    # never reached). Floors: 0.1% MFU and 1 GFLOP/s are below any GPU run; smaller values gave
    # an infinite step (5e-324 divided the FLOPs to inf, then a ZeroDivisionError). The GPU's
    # peak bounds --achieved-tflops in the service (service/results.py).
    Option("mfu", "float", QT_TRANSLATE_NOOP("Options", "override the efficiency model with this MFU"), minimum=0.001,
           maximum=1.0, scope="plan", modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "MFU")),
    Option("achieved_tflops", "float", QT_TRANSLATE_NOOP("Options", "override: achieved TFLOP/s per GPU"),
           minimum=0.001, maximum=1e6, unit="TFLOP/s", scope="plan", modes=TRAINING,
           label=QT_TRANSLATE_NOOP("Options", "Achieved TFLOP/s")),
    Option("price_mix", "text", QT_TRANSLATE_NOOP("Options", "e.g. reserved_1yr=0.8,on_demand=0.2"), scope="scenario",
           label=QT_TRANSLATE_NOOP("Options", "Price mix")),
    _choice("price", QT_TRANSLATE_NOOP("Options", "price basis of cost.usd (default on_demand, else the first known "
                                                  "price)"), PRICE_KINDS,
            scope="scenario", label=QT_TRANSLATE_NOOP("Options", "Price basis")),
    _pos("cny_per_usd", QT_TRANSLATE_NOOP("Options", "exchange rate for CNY prices (default 7.10)"), hi=1e4,
         scope="scenario", label=QT_TRANSLATE_NOOP("Options", "CNY per USD")),
    Option("calibration", "text", QT_TRANSLATE_NOOP("Options", "name of a probe calibration profile (gpu-planner "
                                                               "probe --save NAME)"),
           scope="scenario", label=QT_TRANSLATE_NOOP("Options", "Calibration")),
    # The host side (issue 19): checkpoints, storage and the host probe; defaults in core/training/checkpoint.py
    _pos("checkpoint_interval_min", QT_TRANSLATE_NOOP("Options", "minutes between checkpoint saves (default 60)"),
         hi=1e6, unit="min", scope="plan", modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Checkpoint interval")),
    _int("checkpoints_kept", QT_TRANSLATE_NOOP("Options", "checkpoints kept on disk (default 3)"), hi=100000,
         scope="plan", modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Checkpoints kept")),
    _pos("storage_write_gb_s", QT_TRANSLATE_NOOP("Options", "checkpoint write bandwidth of one node in GB/s "
                                                            "(default: the host probe's, else 1)"),
         hi=1e6, unit="GB/s", scope="plan", modes=TRAINING,
         label=QT_TRANSLATE_NOOP("Options", "Storage write bandwidth")),
    Option("host_probe", "text", QT_TRANSLATE_NOOP("Options", "a host probe result (JSON file of gpu-planner "
                                                              "host-probe) that calibrates storage and decode rates"),
           scope="scenario", modes=TRAINING, label=QT_TRANSLATE_NOOP("Options", "Host probe")),
    _int("batch", QT_TRANSLATE_NOOP("Options", "inference: concurrent sequences"), 1, hi=1 << 20, modes=INFERENCE,
         label=QT_TRANSLATE_NOOP("Options", "Concurrent sequences")),
    _int("prompt_len", QT_TRANSLATE_NOOP("Options", "inference: prompt tokens per sequence"), 1024, hi=1 << 24,
         modes=INFERENCE, label=QT_TRANSLATE_NOOP("Options", "Prompt length (tokens)")),
    _int("new_tokens", QT_TRANSLATE_NOOP("Options", "inference: generated tokens per sequence"), 128, hi=1 << 24,
         modes=INFERENCE, label=QT_TRANSLATE_NOOP("Options", "New tokens per request")),
    _choice("inference_api", QT_TRANSLATE_NOOP("Options", "inference: how the batch is run: Hugging Face "
                                                          "model.generate() (transformers 5.x keeps the prefill's "
                                                          "logits for the last token only) or a hand-written "
                                                          "model(input_ids) loop (logits for every prompt token)"),
            INFERENCE_APIS, "generate", modes=INFERENCE, label=QT_TRANSLATE_NOOP("Options", "Inference API")),
    _choice("weights_dtype", QT_TRANSLATE_NOOP("Options", "inference: weight precision"), WEIGHT_DTYPES, "bf16",
            modes=INFERENCE, label=QT_TRANSLATE_NOOP("Options", "Weights")),
    _choice("kv_dtype", QT_TRANSLATE_NOOP("Options", "inference: KV-cache precision"), KV_DTYPES, "bf16",
            modes=INFERENCE, label=QT_TRANSLATE_NOOP("Options", "KV cache")),
)
# `gpu-planner serve` (issue 15): its own options, declared here beside the estimate's table and
# turned into argparse arguments by the same add_arguments; the defaults are vLLM's
# (core/serving/engine.py names their sources). Unset max_num_seqs / max_num_batched_tokens take vLLM's
# default for the GPU's size.
SERVE = ("serve",)
SERVE_OPTIONS: tuple[Option, ...] = (
    Option("model", "model", QT_TRANSLATE_NOOP("Options", "preset name (gpu-planner models) or a config.json path"),
           modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Model")),
    Option("gpu", "text", QT_TRANSLATE_NOOP("Options", "GPU name or id; a comma-separated list with --ttft-ms/--tpot-ms "
                                                       "(search)"), scope="plan", modes=SERVE,
           label=QT_TRANSLATE_NOOP("Options", "GPU")),
    Option("instance", "text", QT_TRANSLATE_NOOP("Options", "cloud instance id; a comma-separated list with "
                                                            "--ttft-ms/--tpot-ms (search)"), scope="plan",
           modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Instance")),
    _int("tp", QT_TRANSLATE_NOOP("Options", "tensor-parallel degree of one replica"), 1, hi=1024, scope="plan",
         modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Tensor parallel")),
    _int("pp", QT_TRANSLATE_NOOP("Options", "pipeline-parallel degree of one replica"), 1, hi=1024, scope="plan",
         modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Pipeline parallel")),
    _int("ep", QT_TRANSLATE_NOOP("Options", "expert-parallel degree (MoE models; divides tp x attention-dp)"), 1,
         hi=1024, scope="plan", modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Expert parallel")),
    _int("attention_dp", QT_TRANSLATE_NOOP("Options", "data-parallel attention ranks in one replica"), 1, hi=1024,
         scope="plan", modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Attention data parallel")),
    _int("replicas", QT_TRANSLATE_NOOP("Options", "independent replicas behind a load balancer"), 1, hi=1 << 16,
         scope="plan", modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Replicas")),
    _int("isl", QT_TRANSLATE_NOOP("Options", "input (prompt) tokens per request"), hi=1 << 24, modes=SERVE,
         label=QT_TRANSLATE_NOOP("Options", "Input tokens")),
    _int("osl", QT_TRANSLATE_NOOP("Options", "output tokens per request"), hi=1 << 24, modes=SERVE,
         label=QT_TRANSLATE_NOOP("Options", "Output tokens")),
    _int("concurrency", QT_TRANSLATE_NOOP("Options", "requests in the system at once (closed loop)"), hi=1 << 30,
         modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Concurrency")),
    _pos("request_rate", QT_TRANSLATE_NOOP("Options", "arriving requests per second (open loop)"), hi=1e9,
         unit="req/s", modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Request rate")),
    _choice("weights_dtype", QT_TRANSLATE_NOOP("Options", "weight precision"), SERVE_WEIGHT_DTYPES, "bf16",
            modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Weights")),
    _choice("kv_dtype", QT_TRANSLATE_NOOP("Options", "KV-cache precision"), SERVE_KV_DTYPES, "bf16", modes=SERVE,
            label=QT_TRANSLATE_NOOP("Options", "KV cache")),
    _choice("engine", QT_TRANSLATE_NOOP("Options", "serving engine (its per-step overhead)"), ENGINE_NAMES, "vllm",
            modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Engine")),
    Option("gpu_memory_utilization", "float", QT_TRANSLATE_NOOP("Options", "share of GPU memory the engine may use "
                                                                            "(vLLM's default 0.9); with trtllm, the "
                                                                            "share of the memory the model leaves "
                                                                            "free that the KV cache takes "
                                                                            "(free_gpu_memory_fraction)"),
           GPU_MEMORY_UTILIZATION, minimum=0.0, maximum=1.0, above_minimum=True, modes=SERVE,
           label=QT_TRANSLATE_NOOP("Options", "GPU memory utilization")),
    _int("max_num_seqs", QT_TRANSLATE_NOOP("Options", "most requests running at once per engine (default vLLM's: "
                                                      "1024 on GPUs of 70 GiB or more except A100, else 256)"),
         hi=1 << 20, modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Max running requests")),
    _int("max_num_batched_tokens", QT_TRANSLATE_NOOP("Options", "token budget of one engine step, chunked prefill "
                                                                "(default vLLM's: 8192 on GPUs of 70 GiB or more "
                                                                "except A100, else 2048)"),
         hi=1 << 24, modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Max tokens per step")),
    _int("benchmark_requests", QT_TRANSLATE_NOOP("Options", "requests a closed-loop benchmark at --concurrency sends "
                                                            "in all, its clients starting together (default: "
                                                            "concurrency x 10)"),
         hi=1 << 30, modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Benchmark requests")),
    _pos("ttft_ms", QT_TRANSLATE_NOOP("Options", "search: time-to-first-token target"), hi=1e9, unit="ms",
         modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "TTFT target")),
    _pos("tpot_ms", QT_TRANSLATE_NOOP("Options", "search: time-per-output-token target"), hi=1e9, unit="ms",
         modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "TPOT target")),
    _int("top", QT_TRANSLATE_NOOP("Options", "search: deployments to list"), 10, hi=10000, modes=SERVE,
         label=QT_TRANSLATE_NOOP("Options", "Top")),
    _choice("price", QT_TRANSLATE_NOOP("Options", "price basis of the cost"), PRICE_KINDS, "on_demand",
            scope="scenario", modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Price basis")),
    _pos("cny_per_usd", QT_TRANSLATE_NOOP("Options", "exchange rate for CNY prices (default 7.10)"), hi=1e4,
         scope="scenario", modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "CNY per USD")),
    Option("calibration", "text", QT_TRANSLATE_NOOP("Options", "name of a probe calibration profile (gpu-planner "
                                                               "probe --save NAME)"),
           scope="scenario", modes=SERVE, label=QT_TRANSLATE_NOOP("Options", "Calibration")),
)
SERVE_BY_KEY = {o.key: o for o in SERVE_OPTIONS}
BY_KEY = {o.key: o for o in OPTIONS}
OPTION_DEFAULTS = {o.key: o.default for o in OPTIONS}
# Options that mean something in one mode only: given in the other they are an error, not
# silently ignored (``--weights-dtype int4`` on a training run once changed nothing).
INFERENCE_ONLY = tuple(o.key for o in OPTIONS if o.modes == INFERENCE)
TRAINING_ONLY = tuple(o.key for o in OPTIONS if o.modes == TRAINING)
WORKLOAD_KEYS = tuple(o.key for o in OPTIONS if o.scope == "workload")
PLAN_KEYS = tuple(o.key for o in OPTIONS if o.scope == "plan")


def check(key: str, value):
    """``value`` for option ``key`` as the engine takes it, or InputError naming the option and
    what is allowed. None (unset) passes. Numbers must be finite; whole numbers may come as
    integral floats (``8.0`` from JSON) but not as bools or text."""
    opt = BY_KEY.get(key)
    if opt is None:
        raise InputError(key, f"is not an estimate option; allowed: {', '.join(sorted(BY_KEY))}")
    return check_value(opt, value)


def check_value(opt: Option, value):
    """``value`` checked against ``opt`` (any Option, also one a command declares for itself)."""
    key = opt.key
    if value is None:
        return None
    bad = InputError(key, f"must be {opt.rule()}; got {_shown(value)}")
    if opt.kind == "choice":
        if value not in opt.choices:
            raise bad
        return value
    if opt.kind == "bool":
        if not isinstance(value, bool):
            raise bad
        return value
    if opt.kind == "model":
        if isinstance(value, dict) and isinstance(value.get("hf_config"), dict):
            return value  # an embedded config, checked when it is read (core/models/hf_config.py)
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
            raise InputError(key, f"must name a preset or a config.json path, or embed a config; got {_shown(value)}")
        return value
    if opt.kind == "text":
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT or "\n" in value:
            raise bad
        return value
    # (math.isfinite of a 400-digit int raises OverflowError: ints are finite, and the range check bounds them)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float)
                                                                          and not math.isfinite(value)):
        raise bad
    if opt.kind == "int":
        if value != int(value):
            raise bad
        value = int(value)
    lo, hi = opt.minimum, opt.maximum
    if (lo is not None and (value <= lo if opt.above_minimum else value < lo)) or (hi is not None and value > hi):
        raise bad
    return value


def check_options(options: dict) -> dict:
    """Every value of ``options`` checked (see ``check``); returns the checked dict."""
    return {k: check(k, v) for k, v in options.items()}


def parse_text(key, text: str):
    """A command-line value for option ``key`` (a key of the table, or an Option): a number
    parsed from text ("1e12", "8.0"), then checked."""
    opt = key if isinstance(key, Option) else BY_KEY[key]
    if opt.kind in ("int", "float"):
        try:
            value = float(text.replace(",", "").replace("_", ""))
            return check_value(opt, value)
        except (ValueError, InputError):  # the message shows the text as typed, not the float read from it
            raise InputError(opt.key, f"must be {opt.rule()}; got {_shown(text)}") from None
    return check_value(opt, text)


def arg_type(opt: Option):
    """An argparse ``type`` that checks a value as ``check_value`` does."""
    import argparse

    def typed(text):
        try:
            return parse_text(opt, text)
        except InputError as e:
            raise argparse.ArgumentTypeError(e.message) from None
    typed.__name__ = opt.key
    return typed


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def add_arguments(parser, items, exclusive: tuple = (), required: tuple = ("model",)) -> None:
    """argparse arguments for ``items`` (keys of the table, or Options a command declares for
    itself): help with unit and default, the value checked as ``check_value`` checks it.
    ``exclusive``: keys that go into one mutually exclusive group. The table's defaults stay
    None in argparse (so a given option can be told from a default one;
    ``service.estimate.apply_cli_defaults`` fills them in); a command's own Options keep theirs."""
    group = parser.add_mutually_exclusive_group() if exclusive else None
    for item in items:
        own = isinstance(item, Option)
        opt = item if own else BY_KEY[item]
        key = opt.key
        target = group if key in exclusive else parser
        text = opt.help + (f" [{opt.unit}]" if opt.unit else "")
        if opt.default not in (None, False) and "default" not in opt.help:
            text += f" (default: {opt.default:g})" if isinstance(opt.default, float) else f" (default: {opt.default})"
        text = text.replace("%", "%%")
        if opt.kind == "bool":
            target.add_argument(opt.flag, dest=key, action="store_true", default=None, help=text)
            continue
        kw = {"dest": key, "type": arg_type(opt), "help": text, "required": key in required}
        if own and opt.default is not None:
            kw["default"] = opt.default
        if opt.kind == "choice":
            kw["metavar"] = opt.metavar or "{" + ",".join(str(c) for c in opt.choices) + "}"
        elif opt.metavar:
            kw["metavar"] = opt.metavar
        target.add_argument(opt.flag, **kw)
