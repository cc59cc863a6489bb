"""``gpu-planner``: the command line (argument parsing only; the work is in core/specdb/
probe/report). Errors exit 2 with one line naming the option and what is allowed."""
from __future__ import annotations

import argparse
import atexit
import csv
import gc
import json
import os
import sys

from planner_app import __version__
from planner_app.core.errors import InputError

EXIT_USAGE = 2

# Engine field names that are no argument's dest (the others name the argument with that dest)
FIELD_TO_OPTION = {"min_headroom": "--min-headroom-pct"}


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no multi-line usage dump) and exit code 2."""

    def error(self, message):
        raise UsageError(f"{self.prog}: error: {message}")


def _positive_int(flag: str):
    """An argparse type for a whole number >= 1 named ``flag`` (the cluster commands)."""
    from planner_app.cli.arguments import arg_type, own_option  # lazy: keeps the engine off the CLI's start
    from planner_app.core.options import MAX_GPUS  # lazy: keeps the engine off the CLI's start
    return arg_type(own_option(flag.lstrip("-").replace("-", "_"), "int", "", minimum=1, maximum=MAX_GPUS))


# Help text of the few arguments whose add_argument call gives none (by argparse dest); the
# requests' options carry theirs (core/options.py).
HELP = {
    "json": "print one JSON object", "csv": "print CSV",
    "kind": "what to list, or import (a SkyPilot or gpuhunt catalog)",
    "backend": "benchmark backend (auto: torch, else cupy, else numpy on the CPU)",
    "quick": "fewer sizes and repeats (about 10 s)",
    "scenario": "scenario file (.json)", "output": "file to write",
    "lang": "report language", "format": "output format (default: from the file's suffix)", "paper": "paper size",
    "gpus_per_node": "GPUs in one node", "nics_per_node": "network adapters per node", "nodes": "nodes to probe",
    "master_addr": "address of the rank-0 host", "port": "TCP port of the rank-0 host",
    "partition": "Slurm partition", "account": "Slurm account", "result": "result file of the cluster probe",
    "cluster_command": "what to do: write a torchrun command or a Slurm script, or import a result",
}


def _document(parser) -> None:
    """Every argument of every command gets a help line and shows its default."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _document(sub)
            action.help = action.help or HELP.get(action.dest) or "command"
            continue
        if action.help == argparse.SUPPRESS or isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        # a help given to add_argument is already an argparse format string; HELP's are plain text
        text = action.help or (HELP.get(action.dest) or action.dest.replace("_", " ")).replace("%", "%%")
        default = action.default
        if action.option_strings and default not in (None, False, "") and "default" not in text \
                and action.default != argparse.SUPPRESS:
            text += f" (default: {default:g})" if isinstance(default, float) else f" (default: {default})"
        action.help = text


# Each command's examples (its --help's epilog): real commands, each run by tests/unit/test_cli_help_and_columns.py.
EXAMPLES = {
    "estimate": [
        ("8 H100s, ZeRO-3 and full recomputation, a 10B-token budget",
         "gpu-planner estimate --model llama-3.1-8b --gpu h100-sxm --gpus 8 --zero 3 --recompute full --tokens 1e10"),
        ("70B pre-training on 64 AWS p5 instances, Megatron layout, at spot prices",
         "gpu-planner estimate --model llama-3.1-70b --instance p5.48xlarge --gpus 512 --tp 8 --pp 4 "
         "--recompute selective --framework megatron --tokens 1e12 --price spot"),
        ("LoRA fine-tuning of a 70B model on one 8-GPU instance",
         "gpu-planner estimate --model llama-3.1-70b --instance p5.48xlarge --finetune lora --lora-rank 16 --tp 8 "
         "--recompute full --tokens 2e8"),
        ("QLoRA on one 24 GB GPU",
         "gpu-planner estimate --model llama-3.1-8b --gpu l4 --finetune qlora --recompute full --seq-len 2048"),
        ("one inference batch (serving under load: gpu-planner serve)",
         "gpu-planner estimate --model llama-3.1-70b --gpu h200 --mode inference --tp 4 --batch 32 "
         "--prompt-len 2048 --new-tokens 256"),
        ("the same numbers as JSON, for scripts",
         "gpu-planner estimate --model llama-3.1-8b --gpu a100-80gb --gpus 8 --zero 3 --recompute full "
         "--seq-len 4096 --json"),
    ],
}


def _epilog(command: str) -> str:
    return "examples:\n" + "\n".join(f"  # {what}\n  {cmd}" for what, cmd in EXAMPLES[command])


def _add_estimate(sub) -> None:
    from planner_app.cli.arguments import add_options, add_request  # lazy: keeps the engine off the CLI's start

    # lazy: keeps the engine off the CLI's start
    from planner_app.core.requests import MODE, InferenceRequest, TrainingRequest
    e = sub.add_parser("estimate", help="memory, time and cost of one plan",
                       usage="%(prog)s --model NAME_OR_PATH (--gpu NAME | --instance ID) [options] [--json]",
                       description="Memory, time and cost of one plan: training by default, or one inference batch\n"
                                   "with --mode inference. The options are grouped by what they describe; each\n"
                                   "says its unit and default.",
                       epilog=_epilog("estimate"), formatter_class=argparse.RawDescriptionHelpFormatter)
    # one flag per option: the training request's, then the inference request's own
    add_request(e, TrainingRequest, exclusive=("gpu", "instance"), required=("model",))
    inference = "inference (with --mode inference)"
    add_options(e, [MODE], titles={MODE.key: inference})
    add_request(e, InferenceRequest, titles={"setup": inference})
    e.add_argument("--json", action="store_true")


def _add_models(sub) -> None:
    m = sub.add_parser("models", help="list model presets")
    m.add_argument("--json", action="store_true")


def _add_specs(sub) -> None:
    s = sub.add_parser("specs", help="list GPUs, instances or fabrics; import a SkyPilot or gpuhunt catalog")
    s.add_argument("kind", choices=("gpus", "instances", "fabrics", "import"))
    s.add_argument("file", nargs="?", help="specs import: a SkyPilot vms.csv, or a gpuhunt catalog (zip or CSV)")
    s.add_argument("--provider", help="specs import: the provider the file is for (AWS, GCP, Azure, ...)")
    s.add_argument("--region", help="specs import: only this region (default: each type's cheapest region)")
    s.add_argument("--price-date", help="specs import: the date the file's prices were read, YYYY-MM-DD "
                                        "(default: today)")
    s.add_argument("--dry-run", action="store_true", help="specs import: report the changes, save nothing")
    fmt = s.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--csv", action="store_true")


def _add_search(sub) -> None:
    from planner_app.cli.arguments import add_request  # lazy: keeps the engine off the CLI's start
    from planner_app.core.requests import SearchRequest  # lazy: keeps the engine off the CLI's start
    sr = sub.add_parser("search", help="find the best parallel layout and instance")
    add_request(sr, SearchRequest, exclusive=("gpu", "instance"), required=("model", "tokens", "max_gpus"),
                titles={"": "model, machines and prices"})
    sr.add_argument("--json", action="store_true")


def _add_scaling(sub) -> None:
    from planner_app.cli.arguments import add_request  # lazy: keeps the engine off the CLI's start
    from planner_app.core.requests import ScalingRequest  # lazy: keeps the engine off the CLI's start
    sc = sub.add_parser("scaling", help="throughput and efficiency against node count")
    add_request(sc, ScalingRequest, exclusive=("gpu", "instance"), required=("model",))
    sc.add_argument("--json", action="store_true")


def _add_probe(sub) -> None:
    from planner_app.cli.arguments import arg_type, own_option  # lazy: keeps the engine off the CLI's start
    pr = sub.add_parser("probe", help="inventory and microbenchmarks of the local GPUs")
    pr.add_argument("--backend", choices=("auto", "torch", "cupy", "numpy"), default="auto")
    pr.add_argument("--quick", action="store_true")
    pr.add_argument("--json", action="store_true")
    pr.add_argument("--timeout", type=arg_type(own_option("timeout", "float", "", minimum=0.0, maximum=86_400.0,
                                                          above_minimum=True)),
                    default=600.0, help="seconds before the benchmark worker is stopped")
    pr.add_argument("--save", metavar="NAME", help="save the results as a calibration profile")
    pr.add_argument("--python", help="the Python interpreter that runs the benchmarks (with torch/cupy)")
    pr.add_argument("--validate", metavar="MODEL[,MODEL]",
                    help="also train each MODEL for a few steps and compare, with and without the calibration "
                         "profile this probe measures")
    pr.add_argument("--model-shapes", metavar="MODEL[,MODEL]",
                    help="also measure the GEMMs of these models' layers (at --validate-args' micro_batch x seq_len "
                         "tokens), sustained; validated models are measured anyway")
    pr.add_argument("--validate-args", metavar="K=V,...",
                    help="validation settings: recipe, micro_batch, seq_len, attention, recompute, optimizer, steps")


def _add_cluster(sub) -> None:
    from planner_app.cli import cluster as cli_cluster  # lazy: keeps the engine off the CLI's start
    cli_cluster.add_parser(sub, _positive_int)
    from planner_app.cli import host_probe as cli_host_probe  # lazy: keeps the engine off the CLI's start
    cli_host_probe.add_parser(sub, _positive_int)
    from planner_app.cli import serve as cli_serve  # lazy: keeps the engine off the CLI's start
    cli_serve.add_parser(sub)


def _add_report(sub) -> None:
    rp = sub.add_parser("report", help="PDF sizing report from a scenario file")
    rp.add_argument("scenario")
    rp.add_argument("-o", "--output", required=True)
    rp.add_argument("--lang", choices=("en", "zh_CN"), default="en")
    rp.add_argument("--format", choices=("pdf", "html", "json", "csv"))
    rp.add_argument("--paper", choices=("A4", "Letter"), default="A4")


# The main window's pages in its order (ui/main_window.py's page list; tests/gui/test_help_menu.py
# keeps the two equal). Here, not imported from the window: `gui --help` loads no Qt.
GUI_PAGES = ("workload", "plan", "compare", "scaling", "search", "serve", "probe", "specs")
GUI_LANGUAGES = ("en", "zh_CN")


def _add_gui(sub) -> None:
    gui = sub.add_parser("gui", help="open the desktop app",
                         epilog="examples:\n  gpu-planner gui\n  gpu-planner gui --page serve --lang zh_CN\n"
                                "  gpu-planner gui examples/inference-70b-service.json --page compare",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    gui.add_argument("--smoke-test", action="store_true", help="open, visit every page, exit 0")
    gui.add_argument("--page", choices=GUI_PAGES, help="the page shown first (default: plan)")
    gui.add_argument("--lang", choices=GUI_LANGUAGES,
                     help="the language of this session (default: the one chosen in Settings; not saved)")
    gui.add_argument("scenario", nargs="?")


# The commands in --help order, each with the function that declares its arguments.
COMMANDS = {"estimate": _add_estimate, "models": _add_models, "specs": _add_specs, "search": _add_search,
            "scaling": _add_scaling, "probe": _add_probe, "cluster": _add_cluster, "report": _add_report,
            "gui": _add_gui}


def build_parser(document: bool = True, command: str | None = None) -> Parser:
    """The whole command line; ``document=False`` skips filling in help texts and defaults
    (main does, unless help is asked for: it keeps the engine's import off ``gpu-planner gui``'s
    start-up). ``command``: the top level with that one command only, which parses its
    arguments as the whole parser does (main builds no more: the others' ~110 arguments cost
    ~5 ms of a 0.2 s ``gpu-planner estimate``)."""
    ap = Parser(prog="gpu-planner", description="Size GPU clusters and cloud GPU servers.")
    ap.add_argument("--version", action="version", version=f"gpu-planner {__version__}")
    sub = ap.add_subparsers(dest="command", parser_class=Parser)
    for name, add in COMMANDS.items():
        if command in (None, name):
            add(sub)
    if document:
        _document(ap)
    return ap


def _fail(message: str) -> int:
    print(message.splitlines()[0], file=sys.stderr)
    return EXIT_USAGE


def _input_error_line(prog: str, e) -> str:
    field = getattr(e, "field", "")
    opt = FIELD_TO_OPTION.get(field) or _flag_of(build_parser(document=False), field) or field
    return f"{prog}: error: {opt}: {e.message}"


def _import_numpy_single_threaded() -> None:
    """Load numpy with a one-thread OpenBLAS. At load OpenBLAS starts a worker per core that
    spins for a while: ~60 ms of CPU in a 0.3 s ``estimate``, whose matrices are a few rows
    (on 2 shared cores that spinning thread competes with the estimate itself). Only where
    numpy is not loaded yet and the user set nothing; the variable is removed again at once
    so that no child process (the probe's numpy GEMMs) inherits it."""
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        # lazy: numpy loads with a one-thread OpenBLAS (see the docstring)
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


def _flag_of(parser, dest: str) -> str | None:
    """The option string of argument ``dest`` in any command of ``parser``, or None."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found = _flag_of(sub, dest)
                if found:
                    return found
        elif action.dest == dest and action.option_strings:
            return action.option_strings[-1]
    return None


def _no_cyclic_gc_until_exit() -> None:
    """For a command run as its own process: Python's cyclic garbage collector off, and at exit
    every object frozen, so that the interpreter's shutdown does not traverse them all again.
    ``gpu-planner estimate`` leaves only a few kB of cyclic garbage (argparse's parsers refer to
    their groups) and closes its database itself; the collector cost it ~7 ms of CPU while it
    ran (most of it while numpy loads) and its shutdown ~16 ms, of ~0.15 s (benchmarks/speed/cli_speed.py)."""
    gc.disable()
    atexit.register(gc.freeze)


def main(argv=None) -> int:
    """The ``gpu-planner`` command; ``argv`` None: this process's command line (the console
    script, ``python -m planner_app``, the bundle), and the process exits when main returns."""
    own_process = argv is None
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["estimate"]:
        if own_process:
            _no_cyclic_gc_until_exit()
        _import_numpy_single_threaded()
    help_asked = any(a in ("-h", "--help") for a in argv)
    # a command's arguments need only that command's parser (an unknown command, the top
    # level's options and help get the whole one)
    command = argv[0] if argv[:1] and argv[0] in COMMANDS and not help_asked else None
    parser = build_parser(document=help_asked, command=command)
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        return _fail(str(e))
    if args.command is None:
        return _open_gui(args, [])
    from planner_app.specdb.schema import SpecDataError  # lazy: keeps the spec database off the CLI's start
    from planner_app.specdb.userdb import UserDBError  # lazy: keeps the spec database off the CLI's start

    prog = f"gpu-planner {args.command}"
    try:
        if args.command == "estimate":
            from planner_app.cli import estimate as cli_estimate  # lazy: keeps the engine off the CLI's start
            return cli_estimate.run(args)
        if args.command == "models":
            return _models(args)
        if args.command == "specs":
            return _specs(args)
        if args.command == "search":
            from planner_app.cli import search as cli_search  # lazy: keeps the engine off the CLI's start
            return cli_search.run_search(args)
        if args.command == "scaling":
            from planner_app.cli import search as cli_search  # lazy: keeps the engine off the CLI's start
            return cli_search.run_scaling(args)
        if args.command == "probe":
            from planner_app.cli import probe as cli_probe  # lazy: keeps the engine off the CLI's start
            return cli_probe.run(args)
        if args.command == "cluster":
            from planner_app.cli import cluster as cli_cluster  # lazy: keeps the engine off the CLI's start
            return cli_cluster.run(args)
        if args.command == "serve":
            from planner_app.cli import serve as cli_serve  # lazy: keeps the engine off the CLI's start
            return cli_serve.run(args)
        if args.command == "host-probe":
            from planner_app.cli import host_probe as cli_host_probe  # lazy: keeps the engine off the CLI's start
            return cli_host_probe.run(args)
        if args.command == "report":
            if not _display_available():
                # a headless command: Qt paints the PDF offscreen instead of aborting for lack of a display
                os.environ["QT_QPA_PLATFORM"] = "offscreen"
            from planner_app.cli import report as cli_report  # lazy: keeps the engine off the CLI's start
            return cli_report.run(args)
        if args.command == "gui":
            return _open_gui(args, [args.scenario] if args.scenario else [])
    except InputError as e:
        return _fail(_input_error_line(prog, e))
    except SpecDataError as e:
        return _fail(f"{prog}: error: spec data: {e}")
    except UserDBError as e:
        return _fail(f"{prog}: error: your database: {e}")
    except BrokenPipeError:
        return 0
    except OSError as e:  # a file the command reads or writes: full disk, a folder, no permission
        name = f"{e.filename}: " if getattr(e, "filename", None) else ""
        return _fail(f"{prog}: error: {name}{e.strerror or e}")
    return 0


def _open_gui(args, files) -> int:
    smoke = bool(getattr(args, "smoke_test", False))
    page, lang = getattr(args, "page", None), getattr(args, "lang", None)
    if not _display_available():  # Qt would abort the process ("could not connect to display")
        print("gpu-planner: no display found (set DISPLAY or QT_QPA_PLATFORM); the headless commands are: "
              "estimate, models, specs, search, scaling, serve, probe, report", file=sys.stderr)
        return EXIT_USAGE
    from planner_app import app  # lazy: keeps Qt off the CLI's start
    return app.run(files=files, smoke_test=smoke, page=page, lang=lang)


def _display_available() -> bool:
    if os.environ.get("QT_QPA_PLATFORM", "").startswith(("offscreen", "minimal", "vnc")):
        return True
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _models(args) -> int:
    from planner_app.service.catalog import open_catalog  # lazy: keeps the engine off the CLI's start
    from planner_app.specdb.catalog import model_from_row  # lazy: keeps the engine off the CLI's start

    db = open_catalog()  # the shipped presets and the user's own models
    rows = []
    for r in db.records["models"]:
        m = model_from_row(r)
        rows.append({"id": r["id"], "name": r["name"], "arch": r["arch"], "params": m.params_total,
                     "params_active": m.params_active, "layers": m.layers, "hidden": m.hidden,
                     "default_seq_len": int(r["default_seq_len"] or 0), "aliases": r["aliases"],
                     "source": r["source_url"], "retrieved": r["retrieved"], "notes": r["notes"],
                     "origin": r.get("origin", "shipped")})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    # columns as wide as their longest entry: a table never cuts a name
    wid, wname, warch = (max([len(h)] + [len(str(r[k])) for r in rows]) for k, h in
                         (("id", "id"), ("name", "name"), ("arch", "arch")))
    print(f"{'id':{wid}s} {'name':{wname}s} {'arch':{warch}s} {'params':>10s}  source")
    for r in rows:
        print(f"{r['id']:{wid}s} {r['name']:{wname}s} {r['arch']:{warch}s} {r['params'] / 1e9:9.2f}B  {r['source']}")
    return 0


def _specs(args) -> int:
    from planner_app.service.catalog import open_catalog  # lazy: keeps the engine off the CLI's start

    if args.kind == "import":
        from planner_app.cli import specs_import  # lazy: keeps the engine off the CLI's start
        return specs_import.run(args)
    for opt in ("file", "provider", "region", "price_date"):
        if getattr(args, opt):
            flag = "FILE" if opt == "file" else "--" + opt.replace("_", "-")
            raise InputError(opt, f"{flag} belongs to `specs import`, not to `specs {args.kind}`")
    db = open_catalog()
    records = db.records_as_printed(args.kind)
    if args.csv:
        # The csv module, not pandas (~0.5 s to import); written as pandas' to_csv wrote it:
        # "\n" line ends, minimal quoting, empty cells for missing numbers, floats as repr().
        columns = [c for c in db.columns(args.kind) if c != "origin"]
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(columns)
        w.writerows(["" if r[c] is None else r[c] for c in columns] for r in records)
        return 0
    rows = []
    for rec in records:
        rec["source"] = rec.get("source_url")
        rows.append(rec)
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
        return 0
    cols = {"gpus": ["id", "name", "memory_gb", "mem_bw_gb_s", "bf16_tflops", "fp8_tflops", "link", "retrieved"],
            "instances": ["provider", "region", "instance_id", "gpu_id", "gpu_count", "price_on_demand_hr",
                          "currency", "price_date"],
            "fabrics": ["id", "name", "scope", "bw_gb_s", "latency_us", "efficiency", "retrieved"]}[args.kind]
    print("  ".join(cols))
    for r in rows:
        print("  ".join("" if r.get(c) is None else str(r.get(c)) for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
