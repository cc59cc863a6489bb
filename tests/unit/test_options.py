"""The option table (planner_app/service/options.py) is the one declaration of every
estimate option: the CLI's arguments, the defaults, the mode rules and the checks that the
CLI, scenario files and the GUI's option dicts all run come from it."""
from __future__ import annotations

import argparse
import json

import pytest

from planner_app import scenario
from planner_app.cli import INFERENCE_ARGS, WORKLOAD_ARGS, build_parser, main
from planner_app.core.errors import InputError
from planner_app.service import options
from planner_app.service.estimate import estimate_from_options
from planner_app.service.options import OPTION_DEFAULTS
from planner_app.specdb.schema import SpecDataError


def _sub(name):
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def test_estimate_arguments_are_the_table():
    est = _sub("estimate")
    dests = {a.dest for a in est._actions if a.option_strings and a.dest not in ("help", "json")}
    assert dests == set(options.BY_KEY)  # every option, nothing declared beside the table
    assert set(WORKLOAD_ARGS) | set(INFERENCE_ARGS) | {"mode"} == set(options.BY_KEY)
    assert OPTION_DEFAULTS == {o.key: o.default for o in options.OPTIONS}
    text = est.format_help().replace("\n", " ")
    for o in options.OPTIONS:
        assert o.flag in text
        assert " ".join(o.help.split()[:3]) in " ".join(text.split()), o.key


@pytest.mark.parametrize("key, value", [("tp", "abc"), ("tp", 3.5), ("tp", True), ("gpus", "8"), ("gpus", 1e30),
                                        ("mfu", -0.1), ("mfu", 1.5), ("mfu", float("nan")), ("tokens", float("inf")),
                                        ("recipe", "fp4"), ("sequence_parallel", "yes"), ("zero", 4),
                                        ("model", ""), ("fabric", "a\nb")])
def test_every_entry_path_refuses_a_bad_value_naming_the_option(key, value, tmp_path):
    # the GUI's and the report's path: an option dict
    with pytest.raises(InputError) as e:
        estimate_from_options({"model": "llama-2-7b", "gpu": "h100-sxm", key: value}, db=None)
    assert e.value.field == key and "must" in e.value.message
    # a scenario file
    sc = scenario.new_scenario()
    where = "workload" if options.BY_KEY[key].scope == "workload" else "plans"
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
    assert options.check("tp", 8.0) == 8 and isinstance(options.check("tp", 8.0), int)
    assert options.check_options({"gpus": 16, "mfu": 0.4, "recipe": "bf16", "tp": None}) == \
        {"gpus": 16, "mfu": 0.4, "recipe": "bf16", "tp": None}


def test_mode_rules_come_from_the_table():
    from planner_app.service.options import INFERENCE_ONLY, TRAINING_ONLY
    assert "weights_dtype" in INFERENCE_ONLY and "zero" in TRAINING_ONLY
    assert not set(INFERENCE_ONLY) & set(TRAINING_ONLY)


def test_the_reports_inputs_table_comes_from_the_table():
    from planner_app.report.html import WORKLOAD_LABELS
    keys = [k for k, _label, _f in WORKLOAD_LABELS]
    assert keys[:-1] == list(options.WORKLOAD_KEYS) and keys[-1] == "target_tokens_per_s"
    assert all(label == options.BY_KEY[k].label and label for k, label, _f in WORKLOAD_LABELS[:-1])


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
    """The commands' own numbers (search, probe, cluster) go through service/options.py's checks."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert flag in err and "must be" in err and len(err.splitlines()) == 1, err
