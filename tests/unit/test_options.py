"""The typed requests (core/requests.py) are the one declaration of every option: the CLI's
arguments, the defaults, the mode rules and the one check that the CLI, scenario files, the GUI and
scripts all run come from their fields; no default is written twice."""
from __future__ import annotations

import argparse
import ast
import json
import os

import pytest

from planner_app import scenario
from planner_app.cli import build_parser, main
from planner_app.core import options
from planner_app.core.errors import InputError
from planner_app.core.requests import (
    ESTIMATE_REQUESTS,
    MODE,
    InferenceRequest,
    ScalingRequest,
    SearchRequest,
    ServeSearchRequest,
    TrainingRequest,
)
from planner_app.service.estimate import estimate_json, estimate_request
from planner_app.specdb.schema import SpecDataError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUESTS = (TrainingRequest, InferenceRequest, ServeSearchRequest, SearchRequest, ScalingRequest)
ESTIMATE = {k: o for cls in ESTIMATE_REQUESTS.values() for k, o in options.options_of(cls).items()}


def _sub(name):
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


@pytest.mark.parametrize("command, cls", [("estimate", None), ("search", SearchRequest), ("scaling", ScalingRequest),
                                          ("serve", ServeSearchRequest)])
def test_each_commands_arguments_are_its_requests_options(command, cls):
    p = _sub(command)
    dests = {a.dest for a in p._actions if a.option_strings and a.dest not in ("help", "json")}
    want = set(ESTIMATE) | {"mode"} if cls is None else set(options.options_of(cls))
    assert dests == want  # every option, nothing declared beside the requests
    text = " ".join(p.format_help().split())
    for key in want:
        opt = MODE if key == "mode" else (ESTIMATE[key] if cls is None else options.option_of(cls, key))
        assert opt.flag in text and " ".join(opt.help.split()[:3]) in text, key


def test_every_option_has_a_label_help_and_a_valid_default():
    for cls in REQUESTS:
        for key, opt in options.options_of(cls).items():
            assert opt.label and opt.help, (cls.__name__, key)
            if opt.default is not None and not opt.auto and opt.kind != "model":
                assert opt.check(opt.default) == opt.default, (cls.__name__, key)  # a real value, in range
            if opt.kind == "choice" and opt.default not in (None, ""):
                assert opt.default in opt.choices


@pytest.mark.parametrize("key, value", [("tp", "abc"), ("tp", 3.5), ("tp", True), ("gpus", "8"), ("gpus", 1e30),
                                        ("mfu", -0.1), ("mfu", 1.5), ("mfu", float("nan")), ("tokens", float("inf")),
                                        ("recipe", "fp4"), ("sequence_parallel", "yes"), ("zero", 4),
                                        ("model", ""), ("fabric", "a\nb"), ("dp", 0)])
def test_every_entry_path_refuses_a_bad_value_naming_the_option(key, value, tmp_path):
    # the GUI's and a script's path: option values
    with pytest.raises(InputError) as e:
        estimate_json({"model": "llama-2-7b", "gpu": "h100-sxm", key: value}, db=None)
    assert e.value.field == key and "must" in e.value.message
    # a scenario file
    sc = scenario.new_scenario()
    where = "workload" if ESTIMATE[key].scope == "workload" else "plans"
    (sc["workload"] if where == "workload" else sc["plans"][0])[key] = value
    path = tmp_path / "s.json"
    path.write_text(json.dumps(sc, allow_nan=True))
    with pytest.raises(SpecDataError) as e:
        scenario.load(str(path))
    assert key in str(e.value)


def test_the_cli_refuses_the_same_values(capsys):
    assert main(["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--mfu", "-0.1"]) == 2
    err = capsys.readouterr().err
    assert "--mfu" in err and "from 0.001 to 1" in err and len(err.strip().splitlines()) == 1
    assert main(["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--gpus", "1e30"]) == 2
    assert "1,048,576" in capsys.readouterr().err


def test_integral_floats_from_json_are_whole_numbers():
    opt = ESTIMATE["tp"]
    assert opt.check(8.0) == 8 and isinstance(opt.check(8.0), int)
    req = options.build(TrainingRequest, {"model": "gpt2", "gpus": 16.0, "mfu": 0.4, "recipe": "bf16", "tp": None})
    assert req.machine.gpus == 16 and req.speed.mfu == 0.4 and req.layout.tp == 1


def test_a_request_is_built_from_its_options_and_gives_them_back():
    values = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 16, "tp": 2, "zero": 1, "micro_batch": 2,
              "recompute": "full", "recipe": "bf16", "finetune": "lora", "lora_rank": 16, "price": "spot"}
    req = options.build(TrainingRequest, values)
    assert options.given(req) == values
    assert options.build(TrainingRequest, options.given(req)) == req
    assert options.with_options(req, tp=4).layout.tp == 4 and options.with_options(req, tp=4).setup == req.setup


def test_mode_rules_come_from_the_requests():
    with pytest.raises(InputError) as e:
        estimate_request({"model": "gpt2", "gpu": "h100-sxm", "weights_dtype": "fp8"}, "training")
    assert e.value.field == "weights_dtype" and "inference" in e.value.message
    with pytest.raises(InputError) as e:
        estimate_request({"model": "gpt2", "gpu": "h100-sxm", "zero": 1}, "inference")
    assert e.value.field == "zero" and "training" in e.value.message
    train, infer = set(options.options_of(TrainingRequest)), set(options.options_of(InferenceRequest))
    assert "weights_dtype" in infer - train and "zero" in train - infer


def test_an_option_that_requires_another_is_refused_without_it():
    with pytest.raises(InputError) as e:
        options.build(TrainingRequest, {"model": "gpt2", "lora_rank": 16})
    assert e.value.field == "lora_rank" and "finetune" in e.value.message
    with pytest.raises(InputError) as e:
        options.build(TrainingRequest, {"model": "gpt2", "finetune": "lora", "qlora_prepare": True})
    assert e.value.field == "qlora_prepare"


def test_the_reports_inputs_table_comes_from_the_requests():
    from planner_app.report.html import PLAN_LABELS, WORKLOAD_LABELS
    keys = [k for k, _label, _f in WORKLOAD_LABELS]
    assert keys[-1] == "target_tokens_per_s"
    assert set(keys[:-1]) == {k for k, o in ESTIMATE.items() if o.scope == "workload" and o.kind != "model"}
    assert {k for k, _l, _f in PLAN_LABELS} == {k for k, o in ESTIMATE.items() if o.scope == "plan"} - {"gpu",
                                                                                                      "instance"}
    assert all(label == ESTIMATE[k].label for k, label, _f in WORKLOAD_LABELS[:-1])


def test_the_scenario_schema_comes_from_the_requests():
    assert set(scenario.WORKLOAD_KEYS) == {"mode", "target_tokens_per_s"} | {
        k for k, o in ESTIMATE.items() if o.scope == "workload"}
    assert set(scenario.PLAN_KEYS) == {"name"} | {k for k, o in ESTIMATE.items() if o.scope == "plan"}


@pytest.mark.parametrize("argv, flag", [
    (["search", "--model", "gpt2", "--tokens", "1e9", "--gpu", "h100-sxm", "--max-gpus", "0"], "--max-gpus"),
    (["search", "--model", "gpt2", "--tokens", "1e9", "--gpu", "h100-sxm", "--max-gpus", "8",
      "--min-headroom-pct", "120"], "--min-headroom-pct"),
    (["search", "--model", "gpt2", "--tokens", "inf", "--gpu", "h100-sxm", "--max-gpus", "8"], "--tokens"),
    (["search", "--model", "gpt2", "--tokens", "1e9", "--gpu", "h100-sxm", "--max-gpus", "8",
      "--optimizer-impl", "apex"], "--optimizer-impl"),
    (["probe", "--timeout", "-1"], "--timeout"),
    (["cluster", "command", "--nodes", "0"], "--nodes"),
])
def test_command_arguments_are_checked_by_the_same_code(argv, flag, capsys):
    """The commands' own numbers (search, probe, cluster) go through the options' checks."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert flag in err and "must be" in err and len(err.splitlines()) == 1, err


# ---- a default is written once ----------------------------------------------------------------
def _declaring_classes() -> set:
    """Names of the classes whose fields declare options (the requests and their parts)."""
    out = set()

    def walk(cls):
        import dataclasses
        out.add(cls.__name__)
        for f in dataclasses.fields(cls):
            if f.metadata.get(options.PART):
                walk(f.metadata[options.PART])
    for cls in REQUESTS:
        walk(cls)
    return out


def restated_defaults(root: str, packages=("planner_app/core", "planner_app/service")) -> list[str]:
    """Every parameter of a function and every field of a class in ``packages`` (folders under
    ``root``) that has an option's name and a literal default other than None (None: not given),
    outside the classes that declare the options: the option's default written a second time. A
    default that names a constant (with its source) is that constant's one use, not a restatement."""
    keys = set(ESTIMATE) | {k for cls in REQUESTS for k in options.options_of(cls)}
    declaring = _declaring_classes()
    found = []
    for pkg in packages:
        for dirpath, _dirs, files in os.walk(os.path.join(root, pkg)):
            for fname in files:
                if not fname.endswith(".py"):
                    continue
                path = os.path.join(dirpath, fname)
                with open(path, encoding="utf-8") as f:
                    tree = ast.parse(f.read(), path)
                rel = os.path.relpath(path, root)

                def literal(node):
                    return isinstance(node, ast.Constant) and node.value is not None

                for node in ast.walk(tree):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        a = node.args
                        pos = a.posonlyargs + a.args
                        pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults)) + [
                            (k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
                        found += [f"{rel}:{node.lineno} {node.name}({arg.arg}={ast.unparse(d)})"
                                  for arg, d in pairs if arg.arg in keys and literal(d)]
                    elif isinstance(node, ast.ClassDef) and node.name not in declaring:
                        for st in node.body:
                            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and \
                                    st.target.id in keys and st.value is not None and literal(st.value):
                                found.append(f"{rel}:{st.lineno} {node.name}.{st.target.id} = {ast.unparse(st.value)}")
    return found


def test_no_option_default_is_restated_in_the_core_or_the_service():
    found = restated_defaults(ROOT)
    assert not found, "defaults written beside their option's declaration:\n" + "\n".join(found)


def test_the_restated_default_check_bites(tmp_path):
    """A function of the core that writes tp's default again is found, as is a dataclass field."""
    core = tmp_path / "planner_app" / "core"
    core.mkdir(parents=True)
    (core / "mod.py").write_text("class Plan:\n    optimizer_impl: str = \"foreach\"\n\n\n"
                                 "def formula(model, tp=1, seq=None):\n    return tp\n")
    found = restated_defaults(str(tmp_path))
    assert any("formula(tp=1)" in f for f in found) and any("Plan.optimizer_impl" in f for f in found)
    assert not any("seq" in f for f in found)


def test_an_integer_too_large_for_a_float_option_is_refused_by_name():
    """The fuzz suite's case (tests/reliability/test_fuzz.py): a scenario with tokens = 10**400 gave
    OverflowError from float(); it is an input error naming the option."""
    from planner_app.core.errors import InputError
    from planner_app.core.options import build
    from planner_app.core.requests import TrainingRequest

    with pytest.raises(InputError) as e:
        build(TrainingRequest, {"model": "llama-2-7b", "gpu": "h100-sxm", "tokens": 10 ** 400})
    assert e.value.field == "tokens"
