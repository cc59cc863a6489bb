"""Command-line arguments generated from the requests' options (core/options.py): one flag per
option key, its value checked as the option checks it (so the CLI, scenario files and the GUI
refuse the same values with the same words), its help with unit and default. argparse leaves every
option None until it is given, so what a command line states is told apart from a default and read
back as option values (``values_of``) for ``options.build``."""
from __future__ import annotations

import argparse
from collections.abc import Iterable

from planner_app.core.errors import InputError
from planner_app.core.options import Option, options_of


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


def add_options(parser, options: Iterable[Option], exclusive: tuple = (), required: tuple = ()) -> None:
    """Arguments for ``options`` (those already on ``parser`` skipped); ``exclusive``: keys that go
    into one mutually exclusive group; ``required``: keys that must be given."""
    have = {a.dest for a in parser._actions}
    group = parser.add_mutually_exclusive_group() if exclusive else None
    for opt in options:
        if opt.key in have:
            continue
        add_option(group if opt.key in exclusive else parser, opt, required=opt.key in required)
        have.add(opt.key)


def add_request(parser, cls, exclusive: tuple = (), required: tuple = (), skip: tuple = ()) -> None:
    """An argument for every option of request ``cls`` (its parts' too), in declaration order."""
    add_options(parser, [o for k, o in options_of(cls).items() if k not in skip], exclusive, required)


def values_of(args, cls) -> dict:
    """The options of ``cls`` the command line gave (argparse's None: not given)."""
    return {k: getattr(args, k) for k in options_of(cls) if getattr(args, k, None) is not None}


def own_option(key: str, kind: str, help: str, **kw) -> Option:
    """An argument of one command (not an option of a request), checked like the options."""
    return Option(kind, help, key=key, scope="command", **kw)
