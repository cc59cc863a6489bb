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

from planner_app.core.cost import PRICE_KINDS
from planner_app.core.errors import InputError
from planner_app.core.setup import (ATTENTIONS, FRAMEWORKS, KV_DTYPES, OFFLOADS, OPTIMIZER_IMPLS, OPTIMIZERS,
                                    PP_SCHEDULES, RECIPES, RECOMPUTES, WEIGHT_DTYPES)

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
    label: str = ""  # the report's (and the GUI's) name for it; translated in the report's catalogue

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


OPTIONS: tuple[Option, ...] = (
    Option("model", "model", "preset name (gpu-planner models) or a config.json path", label="Model"),
    Option("mode", "choice", "training, or one inference batch (serving under load: gpu-planner serve)",
           "training", choices=("training", "inference"), label="Mode"),
    Option("gpu", "text", "GPU name or id (gpu-planner specs gpus)", scope="plan"),
    Option("instance", "text", "cloud instance id (gpu-planner specs instances)", scope="plan"),
    _int("gpus", "total GPUs (default tp*pp*cp*ep*dp)", scope="plan"),
    _int("gpus_per_node", "GPUs in one node (default: the instance's, else 8)", hi=1024, scope="plan"),
    _int("micro_batch", "sequences per GPU per forward/backward pass", 1, hi=1 << 20, modes=TRAINING,
        label="Micro-batch"),
    _int("seq_len", "tokens per sequence (default: the preset's context used for training)", hi=1 << 24,
        label="Sequence length"),
    _int("global_batch", "sequences per optimizer step across all GPUs (default: micro-batch x dp x ep)",
         hi=1 << 30, modes=TRAINING, label="Global batch (sequences)"),
    _pos("tokens", "training budget in tokens", hi=1e18, modes=TRAINING, label="Training tokens"),
    _choice("recipe", "precision recipe (default: bf16 mixed precision the GPU supports, by framework)", RECIPES,
            modes=TRAINING, label="Precision recipe"),
    _choice("optimizer", "optimizer (its states per parameter)", OPTIMIZERS, "adamw", modes=TRAINING,
        label="Optimizer"),
    _choice("optimizer_impl", "PyTorch AdamW implementation (--framework pytorch): fused (Hugging Face Trainer's "
            "default on PyTorch 2.8+, torchtitan), foreach (torch.optim's default) or forloop", OPTIMIZER_IMPLS,
            "fused", modes=TRAINING, label="Optimizer implementation"),
    _choice("attention", "attention kernel (default: flash for megatron, sdpa otherwise)", ATTENTIONS,
        label="Attention"),
    _choice("recompute", "activation recomputation", RECOMPUTES, "none", modes=TRAINING,
        label="Activation recomputation"),
    _int("tp", "tensor-parallel degree", hi=65536, scope="plan"),
    _int("pp", "pipeline-parallel degree", hi=65536, scope="plan"),
    _int("dp", "data-parallel degree (default: GPUs / (tp x pp x cp x ep))", scope="plan", modes=TRAINING),
    _int("cp", "context-parallel degree", hi=65536, scope="plan", modes=TRAINING),
    _int("ep", "expert-parallel degree (MoE models)", hi=65536, scope="plan"),
    _int("vp", "virtual stages per rank (interleaved)", 2, hi=1024, scope="plan", modes=TRAINING),
    _int("zero", "ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also parameters", 0, lo=0, hi=3,
         scope="plan", modes=TRAINING, metavar="{0,1,2,3}"),
    Option("sequence_parallel", "bool", "Megatron sequence parallelism (needs --tp > 1)", False, scope="plan",
           modes=TRAINING),
    _choice("pp_schedule", "pipeline schedule", PP_SCHEDULES, "1f1b", scope="plan", modes=TRAINING),
    _choice("offload", "offload states to the CPU (ZeRO-Offload)", OFFLOADS, "none", modes=TRAINING, label="Offload"),
    _choice("framework", "training framework (its buffers and overheads)", FRAMEWORKS, "pytorch", label="Framework"),
    Option("fabric", "text", "inter-node network id (gpu-planner specs fabrics; default: the instance's, else "
           "InfiniBand NDR)", scope="plan"),
    _int("nics_per_node", "network adapters per node (default: the instance's, else one per GPU)", hi=1024,
         scope="plan"),
    # The overrides set the training step time (inference has its own speed model, which they
    # never reached). Floors: 0.1% MFU and 1 GFLOP/s are below any GPU run; smaller values gave
    # an infinite step (5e-324 divided the FLOPs to inf, then a ZeroDivisionError).
    Option("mfu", "float", "override the efficiency model with this MFU", minimum=0.001, maximum=1.0,
           scope="plan", modes=TRAINING),
    Option("achieved_tflops", "float", "override: achieved TFLOP/s per GPU (at most the GPU's peak)", minimum=0.001,
           maximum=1e6, unit="TFLOP/s", scope="plan", modes=TRAINING),
    Option("price_mix", "text", "e.g. reserved_1yr=0.8,on_demand=0.2", scope="scenario"),
    _choice("price", "price basis of cost.usd (default on_demand, else the first known price)", PRICE_KINDS,
            scope="scenario"),
    _pos("cny_per_usd", "exchange rate for CNY prices (default 7.10)", hi=1e4, scope="scenario"),
    Option("calibration", "text", "name of a probe calibration profile (gpu-planner probe --save NAME)",
           scope="scenario"),
    _int("batch", "inference: concurrent sequences", 1, hi=1 << 20, modes=INFERENCE, label="Concurrent sequences"),
    _int("prompt_len", "inference: prompt tokens per sequence", 1024, hi=1 << 24, modes=INFERENCE,
        label="Prompt length (tokens)"),
    _int("new_tokens", "inference: generated tokens per sequence", 128, hi=1 << 24, modes=INFERENCE,
        label="New tokens per request"),
    _choice("weights_dtype", "inference: weight precision", WEIGHT_DTYPES, "bf16", modes=INFERENCE, label="Weights"),
    _choice("kv_dtype", "inference: KV-cache precision", KV_DTYPES, "bf16", modes=INFERENCE, label="KV cache"),
)
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
            return value  # an embedded config, checked when it is read (core/hf_config.py)
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
