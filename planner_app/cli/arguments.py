"""Command-line arguments generated from the requests' options (core/options.py): one flag per
option key, its value checked as the option checks it (so the CLI, scenario files and the GUI
refuse the same values with the same words), its help with unit and default. argparse leaves every
option None until it is given, so what a command line states is told apart from a default and read
back as option values (``values_of``) for ``options.build``."""
from __future__ import annotations

import argparse
from collections.abc import Iterable

from planner_app.core.errors import InputError
from planner_app.core.options import Option, options_of, part_of


def arg_type(opt: Option):
    """An argparse ``type`` that reads and checks a value as ``opt.parse`` does."""
    def typed(text):
        try:
            return opt.parse(text)
        except InputError as e:
            raise argparse.ArgumentTypeError(e.message) from None
    typed.__name__ = opt.key
    return typed


def help_text(opt: Option) -> str:
    """The option's help with its unit and its default (an argparse format string)."""
    text = opt.help + (f" [{opt.unit}]" if opt.unit else "")
    d = opt.default
    if d not in (None, False, "", 0) and "default" not in opt.help:
        text += f" (default: {d:g})" if isinstance(d, float) else f" (default: {d})"
    return text.replace("%", "%%")


def add_option(target, opt: Option, required: bool = False) -> None:
    """One argument for ``opt`` on a parser or an argument group."""
    if opt.kind == "bool":
        target.add_argument(opt.flag, dest=opt.key, action="store_true", default=None, help=help_text(opt))
        return
    kw: dict = {"dest": opt.key, "type": arg_type(opt), "help": help_text(opt), "required": required,
                "default": None}
    if opt.kind == "choice":
        kw["metavar"] = opt.metavar or "{" + ",".join(str(c) for c in opt.choices) + "}"
    elif opt.metavar:
        kw["metavar"] = opt.metavar
    target.add_argument(opt.flag, **kw)


# The titles of --help's argument groups, by the request part that holds an option (core/requests.py:
# a TrainingRequest's machine, setup, layout, ...; part_of); "" is the request's own options.
PART_TITLES = {
    "": "model and calibration",
    "plan": "model and calibration",
    "machine": "machine: a GPU or an instance, GPU count, network",
    "setup": "workload: sequence, batch, tokens, precision, optimizer, attention, fine-tuning",
    "layout": "parallel layout and memory: micro-batch, recomputation, tp/pp/dp/cp/ep, ZeRO",
    "speed": "speed overrides (instead of the engine's efficiency model)",
    "pricing": "prices",
    "host": "host side: checkpoints and storage",
    "limits": "search limits and ranking",
    "curves": "scaling curves",
    "serve": "serving deployment",
    "targets": "latency targets (with them: search for the deployments that meet them)",
}


def _argument_group(parser, title: str):
    """``parser``'s argument group titled ``title`` (made on first use, so two requests' options of
    one kind share it)."""
    for group in parser._action_groups:
        if group.title == title:
            return group
    return parser.add_argument_group(title)


def add_options(parser, options: Iterable[Option], exclusive: tuple = (), required: tuple = (),
                titles: dict | None = None) -> None:
    """Arguments for ``options`` (those already on ``parser`` skipped); ``exclusive``: keys that go
    into one mutually exclusive group; ``required``: keys that must be given; ``titles``: key ->
    the title of the --help group the option is listed in (absent: the command's own options)."""
    have = {a.dest for a in parser._actions}
    group = None
    for opt in options:
        if opt.key in have:
            continue
        title = (titles or {}).get(opt.key)
        target = _argument_group(parser, title) if title else parser
        if opt.key in exclusive:
            if group is None:  # in the argument group of the first of them
                group = target.add_mutually_exclusive_group()
            target = group
        add_option(target, opt, required=opt.key in required)
        have.add(opt.key)


def add_request(parser, cls, exclusive: tuple = (), required: tuple = (), skip: tuple = (),
                titles: dict | None = None) -> None:
    """An argument for every option of request ``cls`` (its parts' too), in declaration order, listed
    by --help in one group per part of the request (PART_TITLES; ``titles``: part -> another title)."""
    names = {**PART_TITLES, **(titles or {})}
    keys = [k for k in options_of(cls) if k not in skip]
    by_key = {k: names.get(part_of(cls, k)) or part_of(cls, k) for k in keys}
    add_options(parser, [options_of(cls)[k] for k in keys], exclusive, required, titles=by_key)


def values_of(args, cls) -> dict:
    """The options of ``cls`` the command line gave (argparse's None: not given)."""
    return {k: getattr(args, k) for k in options_of(cls) if getattr(args, k, None) is not None}


def own_option(key: str, kind: str, help: str, **kw) -> Option:
    """An argument of one command (not an option of a request), checked like the options."""
    return Option(kind, help, key=key, scope="command", **kw)
