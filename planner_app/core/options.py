"""Options, declared once: every user-facing option is one field of a frozen dataclass (a request of
core/requests.py or an engine part it is made of: ``TrainingSetup``, ``ParallelPlan``, ...), and
the field carries its ``Option``: kind, help, label, unit, allowed range or choices, where a
scenario keeps it and what its default stands for. The field's default is the option's default,
written nowhere else.

From these fields come the command line (cli/arguments.py), the scenario schema and its check
(scenario.py), the GUI's rows (ui/option_form.py) and the report's inputs table; ``build`` is the
one validation pass every face runs (the CLI's parsed flags, a scenario's plan, a GUI page, a
script), and ``given`` turns a request back into the options it was built from. A new option is one
field plus its formula; a request's nested parts are walked, so a field added to ``ParallelPlan``
is a flag, a scenario key and a GUI row of every request that holds a layout.

Pure: no argparse, no Qt; label and help texts are marked for translation (``QT_TRANSLATE_NOOP``,
context "Options") and shown translated by the faces.
"""
from __future__ import annotations

import dataclasses
import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from planner_app.core.errors import InputError
from planner_app.core.text import QT_TRANSLATE_NOOP

OPTION = "option"  # a field's metadata key holding its Option
PART = "part"  # a field holding a nested part whose fields are options too
# Whole-number options are capped where a larger value cannot describe a real plan (and where
# Python's int would otherwise carry a 400-digit number into the engine).
MAX_GPUS = 1 << 20
MAX_TEXT = 4096
KINDS = ("int", "float", "choice", "bool", "text", "model")
SCOPES = ("workload", "plan", "scenario", "serve", "command")


@dataclass(frozen=True)
class Option:
    """One option's metadata (its key and default are the field's name and default).

    ``auto``: the default is a stand-in (0, "" or None) that the service resolves (the GPU's
    recipe, the preset's context, dp from the GPU count; the help says how); the GUI shows it as
    "auto". ``requires``: (other key, allowed values): the option means something
    only when the other option has one of those values; given otherwise it is an error.
    ``scope``: where a scenario keeps it (the workload every plan shares, one plan, the scenario,
    its serve section, or a command's own argument). ``group``: the GUI form it belongs to."""

    kind: str
    help: str
    label: str = ""
    key: str = ""
    default: Any = None
    choices: tuple = ()
    minimum: float | None = None  # inclusive, unless above_minimum
    maximum: float | None = None  # inclusive
    above_minimum: bool = False  # the value must be > minimum (positive numbers)
    unit: str = ""
    scope: str = "workload"
    group: str = ""
    metavar: str | None = None
    auto: bool = False
    requires: tuple = ()  # (key, allowed values, or None: the other option must be given)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"option kind {self.kind!r}; allowed: {', '.join(KINDS)}")
        if self.scope not in SCOPES:
            raise ValueError(f"option scope {self.scope!r}; allowed: {', '.join(SCOPES)}")

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

    def check(self, value):
        """``value`` as the engine takes it, or InputError naming the option and what is allowed.
        None (unset) passes; a stand-in default (``auto``) is reached by leaving the option out, not
        by giving it. Numbers must be finite; whole numbers may come as integral floats (``8.0`` from
        JSON) but not as bools or text."""
        if value is None:
            return value
        bad = InputError(self.key, f"must be {self.rule()}; got {_shown(value)}")
        if self.kind == "choice":
            if value not in self.choices:
                raise bad
            return value
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise bad
            return value
        if self.kind == "model":
            if isinstance(value, dict) and isinstance(value.get("hf_config"), dict):
                return value  # an embedded config, checked when it is read (core/models/hf_config.py)
            if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
                raise InputError(self.key, f"must name a preset or a config.json path, or embed a config; "
                                           f"got {_shown(value)}")
            return value
        if self.kind == "text":
            if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT or "\n" in value:
                raise bad
            return value
        # (math.isfinite of a 400-digit int raises OverflowError: ints are finite, and the range check bounds them)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                isinstance(value, float) and not math.isfinite(value)):
            raise bad
        if self.kind == "int":
            if value != int(value):
                raise bad
            value = int(value)
        elif isinstance(value, int):
            try:
                value = float(value)
            except OverflowError:  # a 400-digit integer: no float holds it, so it is out of any range
                raise bad from None
        lo, hi = self.minimum, self.maximum
        if (lo is not None and (value <= lo if self.above_minimum else value < lo)) or (hi is not None and value > hi):
            raise bad
        return value

    def parse(self, text: str):
        """A value typed as text (the command line, a GUI text field): numbers read from "1e12",
        "8.0" or "2,500", then checked; the message shows the text as typed."""
        if self.kind in ("int", "float"):
            try:
                return self.check(float(text.replace(",", "").replace("_", "")))
            except (ValueError, InputError):
                raise InputError(self.key, f"must be {self.rule()}; got {_shown(text)}") from None
        return self.check(text)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def declare(default, option: Option) -> Any:
    """A dataclass field that is ``option``, with its default."""
    return field(default=default, metadata={OPTION: option})


def part(cls, required: bool = False) -> Any:
    """A dataclass field holding a nested part (its fields are options of the request too);
    ``required``: the part has required options itself (a request inside a request), so the field
    has no default."""
    if required:
        return field(metadata={PART: cls})
    return field(default_factory=cls, metadata={PART: cls})


_OPTIONS: dict = {}
_PATHS: dict = {}


def _walk(cls, prefix: tuple, out: dict, paths: dict) -> None:
    for f in fields(cls):
        if f.metadata.get(PART):
            _walk(f.metadata[PART], prefix + (f.name,), out, paths)
        elif OPTION in f.metadata:
            if f.name in out:
                raise TypeError(f"{cls.__name__}.{f.name}: the option {f.name!r} is declared twice in one request")
            default = f.default if f.default is not dataclasses.MISSING else None
            out[f.name] = replace(f.metadata[OPTION], key=f.name, default=default)
            paths[f.name] = prefix + (f.name,)


def options_of(cls) -> dict[str, Option]:
    """Every option of dataclass ``cls`` and its parts, by key, in declaration order."""
    if cls not in _OPTIONS:
        out: dict = {}
        paths: dict = {}
        _walk(cls, (), out, paths)
        _OPTIONS[cls], _PATHS[cls] = out, paths
    return _OPTIONS[cls]


def option_of(cls, key: str) -> Option:
    return options_of(cls)[key]


def _paths(cls) -> dict[str, tuple]:
    options_of(cls)
    return _PATHS[cls]


def part_of(cls, key: str) -> str:
    """The name of the nested part of ``cls`` that holds option ``key`` ("layout" for ``tp`` of a
    TrainingRequest, the innermost where parts nest); "" for an option of ``cls`` itself."""
    path = _paths(cls)[key]
    return path[-2] if len(path) > 1 else ""


def check_fields(obj) -> None:
    """Every option field of ``obj`` (not its parts) passes its option's check: the one check a
    part runs when it is built in code rather than from options (``__post_init__``)."""
    for f in fields(obj):
        opt = f.metadata.get(OPTION)
        if opt is not None:
            value = getattr(obj, f.name)
            if value is not None and not (type(value) is type(f.default) and value == f.default):
                replace(opt, key=f.name, default=f.default).check(value)


def build(cls, values: Mapping[str, Any], what: str = ""):
    """An instance of ``cls`` from flat option values (None or absent: the default): unknown keys,
    values out of range and options given without the option they require are errors naming the
    key. ``what`` names the request in the unknown-key message."""
    opts = options_of(cls)
    paths = _paths(cls)
    checked = {}
    for key, value in values.items():
        opt = opts.get(key)
        if opt is None:
            raise InputError(key, f"is not an option of {what or cls.__name__}; allowed: {', '.join(opts)}")
        value = opt.check(value)
        if value is not None:
            checked[key] = value
    obj = _assemble(cls, (), checked, paths)
    values_now = flat(obj)
    for key in checked:
        req = opts[key].requires
        if not req:
            continue
        other, allowed = req
        if allowed is None and values_now[other] is None:
            raise InputError(key, f"applies with {other} only; give {other}, or leave {key} out")
        if allowed is not None and values_now[other] not in allowed:
            words = " or ".join(map(str, allowed))
            raise InputError(key, f"applies to {other} {words} only; set {other} to {words}, or leave {key} out")
    return obj


def _assemble(cls, prefix: tuple, values: dict, paths: dict):
    kw = {}
    for f in fields(cls):
        if f.metadata.get(PART):
            kw[f.name] = _assemble(f.metadata[PART], prefix + (f.name,), values, paths)
        elif OPTION in f.metadata and paths.get(f.name) == prefix + (f.name,):
            if f.name in values:
                kw[f.name] = values[f.name]
            elif f.default is dataclasses.MISSING:
                raise InputError(f.name, f"is required ({f.metadata[OPTION].help})")
    return cls(**kw)


def flat(obj) -> dict:
    """Every option value of ``obj`` and its parts, by key."""
    out = {}
    for f in fields(obj):
        v = getattr(obj, f.name)
        if f.metadata.get(PART):
            out.update(flat(v))
        elif OPTION in f.metadata:
            out[f.name] = v
    return out


def given(obj) -> dict:
    """The option values of ``obj`` that differ from their defaults (what a scenario or a command
    line states to rebuild it), by key, in declaration order."""
    out = {}
    for f in fields(obj):
        v = getattr(obj, f.name)
        if f.metadata.get(PART):
            out.update(given(v))
        elif OPTION in f.metadata and not (v is None or (type(v) is type(f.default) and v == f.default)):
            out[f.name] = v
    return out


def with_options(obj, **changes):
    """``obj`` with some options (by key, in any part) changed; no check beyond the parts' own."""
    if not changes:
        return obj
    kw = {}
    rest = dict(changes)
    for f in fields(obj):
        if f.metadata.get(PART):
            sub = {k: rest[k] for k in list(rest) if k in options_of(type(getattr(obj, f.name)))}
            if sub:
                kw[f.name] = with_options(getattr(obj, f.name), **sub)
                for k in sub:
                    rest.pop(k)
        elif f.name in rest:
            kw[f.name] = rest.pop(f.name)
    if rest:
        raise InputError(next(iter(rest)), f"is not an option of {type(obj).__name__}")
    return replace(obj, **kw)


def is_request(obj) -> bool:
    return is_dataclass(obj) and not isinstance(obj, type) and any(
        OPTION in f.metadata or f.metadata.get(PART) for f in fields(obj))


def _option_text(value) -> str:
    """A value as the command line reads it back unchanged: 1e+12 rather than 1000000000000.0."""
    if isinstance(value, float):
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    return str(value)


def command_line(command: str, options: dict) -> str:
    """One ``gpu-planner COMMAND`` line that gives ``options`` (by key); every value shell-quoted, a
    true flag bare, false and None left out."""
    parts = ["gpu-planner", command]
    for k, v in options.items():
        flag = "--" + k.replace("_", "-")
        if isinstance(v, bool):
            if v:
                parts.append(flag)
            continue
        if v is None:
            continue
        parts += [flag, shlex.quote(_option_text(v))]
    return " ".join(parts)


# How a choice's value reads on screen and in reports where the value itself is a word of English
# ("none", "selective", "full") or a name a reader may not know ("mixed-bf16"); the GUI and the report
# translate the label (context "Options"); a value not listed reads as it is (bf16, sdpa, adamw,
# vllm: names every language writes the same). Keyed by option key, then value.
CHOICE_LABELS = {
    "mode": {"training": QT_TRANSLATE_NOOP("Options", "training"),
             "inference": QT_TRANSLATE_NOOP("Options", "inference")},
    "recompute": {"none": QT_TRANSLATE_NOOP("Options", "none"),
                  "selective": QT_TRANSLATE_NOOP("Options", "selective"),
                  "full": QT_TRANSLATE_NOOP("Options", "full")},
    "offload": {"none": QT_TRANSLATE_NOOP("Options", "none"),
                "optimizer": QT_TRANSLATE_NOOP("Options", "optimizer states"),
                "params": QT_TRANSLATE_NOOP("Options", "parameters")},
    "finetune": {"full": QT_TRANSLATE_NOOP("Options", "full fine-tuning"),
                 "lora": QT_TRANSLATE_NOOP("Options", "LoRA"),
                 "qlora": QT_TRANSLATE_NOOP("Options", "QLoRA")},
    "recipe": {"mixed-bf16": QT_TRANSLATE_NOOP("Options", "mixed-bf16 (fp32 master weights)"),
               "amp-bf16": QT_TRANSLATE_NOOP("Options", "amp-bf16 (fp32 model, bf16 autocast)"),
               "amp-fp16": QT_TRANSLATE_NOOP("Options", "amp-fp16 (fp32 model, fp16 autocast)"),
               "bf16-autocast": QT_TRANSLATE_NOOP("Options", "bf16-autocast (bf16 model, autocast)")},
    "optimizer_impl": {"fused": QT_TRANSLATE_NOOP("Options", "fused"),
                       "foreach": QT_TRANSLATE_NOOP("Options", "foreach"),
                       "forloop": QT_TRANSLATE_NOOP("Options", "for-loop")},
    "inference_api": {"generate": QT_TRANSLATE_NOOP("Options", "model.generate()"),
                      "forward-loop": QT_TRANSLATE_NOOP("Options", "hand-written forward loop")},
    "pp_schedule": {"interleaved": QT_TRANSLATE_NOOP("Options", "interleaved 1F1B")},
    "objective": {"time": QT_TRANSLATE_NOOP("Options", "fastest"),
                  "cost": QT_TRANSLATE_NOOP("Options", "cheapest")},
}


def choice_label(key: str, value) -> str:
    """The English label of option ``key``'s choice ``value`` (CHOICE_LABELS), else the value."""
    return CHOICE_LABELS.get(key, {}).get(value, str(value))
