"""The CLI reads well (issue 29, item 17): ``estimate --help`` has real examples that run and lists
its options in one group per part of the request; tables print machine and model names in full;
a small job's input pipeline shows its real rate (not "0 samples/s per node"); the blended cost
says what blend it is (not a bare "mix $313")."""
import json
import re
import shlex

import pytest

from planner_app.cli import build_parser, main
from planner_app.cli.arguments import PART_TITLES
from planner_app.core.options import options_of, part_of
from planner_app.core.requests import TrainingRequest


def run(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def _help(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return capsys.readouterr().out


def _examples(help_text):
    """The commands of a --help's "examples:" epilog."""
    tail = help_text.split("\nexamples:\n", 1)[1]
    return [shlex.split(line.strip())[1:] for line in tail.splitlines() if line.strip().startswith("gpu-planner ")]


def test_estimate_help_has_examples_that_run_and_fit(capsys):
    text = _help(capsys, "estimate")
    examples = _examples(text)
    assert 4 <= len(examples) <= 6
    # the examples show the main uses: an instance with prices, fine-tuning, inference, JSON
    flat = [" ".join(e) for e in examples]
    for needed in ("--instance", "--finetune lora", "--finetune qlora", "--mode inference", "--json"):
        assert any(needed in e for e in flat), needed
    for argv in examples:
        rc, out, err = run(capsys, *argv)
        assert rc == 0, (argv, err)
        if "--json" in argv:
            assert json.loads(out)["memory"]["fits"], argv
        else:
            assert ": FITS" in out, argv  # an example is a plan that works


def test_estimate_help_groups_the_options_by_the_part_of_the_request(capsys):
    parser = build_parser()
    estimate = parser._subparsers._group_actions[0].choices["estimate"]
    group_of = {a.dest: g.title for g in estimate._action_groups for a in g._group_actions}
    for key in options_of(TrainingRequest):
        assert group_of[key] == PART_TITLES[part_of(TrainingRequest, key)], key
    assert group_of["tp"] != group_of["seq_len"] != group_of["gpu"] != group_of["price"]
    inference = {group_of[k] for k in ("mode", "batch", "prompt_len", "new_tokens", "weights_dtype", "kv_dtype")}
    assert len(inference) == 1 and "--mode inference" in inference.pop()
    text = _help(capsys, "estimate")
    # the usage line is one line (it listed all 60 flags over 38 lines), then the groups in order
    assert text.splitlines()[0].startswith("usage: gpu-planner estimate --model") and "(--gpu" in text.splitlines()[0]
    assert not text.splitlines()[1].strip()
    titles = [PART_TITLES[p] for p in ("", "machine", "setup", "layout", "speed", "pricing", "host")]
    positions = [text.index("\n" + t + ":\n") for t in titles]
    assert positions == sorted(positions)
    # every option is still documented (help text with its default)
    for key, opt in options_of(TrainingRequest).items():
        assert opt.flag in text, key


def _column_starts(header):
    return {m.group(0): m.start() for m in re.finditer(r"\S+", header)}


def test_serve_search_prints_machine_names_in_full(capsys):
    long_name = "ecs.gn7e-c16g1.32xlarge"
    rc, out, err = run(capsys, "serve", "--model", "llama-3.1-70b", "--instance", f"p5.48xlarge,{long_name}",
                       "--isl", "2048", "--osl", "512", "--concurrency", "64", "--ttft-ms", "1000", "--tpot-ms", "50")
    assert rc == 0, err
    lines = out.splitlines()
    rows = [line for line in lines if re.match(r"\s*\d+ \S", line) and ("p5.48xlarge" in line or "ecs." in line)]
    assert any(f" {long_name} " in row for row in rows)
    assert not any(long_name[:-1] + " " in row for row in rows)  # never cut to "...32xlarg"
    # the columns stay aligned: each header's "GPUs" ends where the rows' GPU counts end
    for i, line in enumerate(lines):
        if line.lstrip().startswith("# machine"):
            end = _column_starts(line)["GPUs"] + len("GPUs")
            for row in lines[i + 1:]:
                if not re.match(r"\s*\d+ \S", row):
                    break
                machine_end = row.index(row.split()[1]) + len(row.split()[1])
                assert machine_end < end and row[end - 1].isdigit() and row[end] == " ", row


def test_models_table_prints_names_in_full(capsys):
    rc, out, err = run(capsys, "models")
    assert rc == 0, err
    rc, js, err = run(capsys, "models", "--json")
    names = [m["name"] for m in json.loads(js)]
    assert any(len(n) > 30 for n in names)  # the table cut names at 30 characters
    for n in names:
        assert n in out, n


LORA = ["estimate", "--model", "llama-3.1-70b", "--instance", "p5.48xlarge", "--finetune", "lora", "--lora-rank", "16",
        "--tp", "8", "--recompute", "full", "--tokens", "2e8"]


def _line(out, start):
    return next(line for line in out.splitlines() if line.startswith(start))


def test_a_small_jobs_input_pipeline_shows_its_real_rate(capsys):
    rc, out, err = run(capsys, *LORA)
    assert rc == 0, err
    rc, js, err = run(capsys, *LORA, "--json")
    demand = json.loads(js)["host"]["input"]
    assert 0 < demand["samples_per_s_per_node"] < 1  # a LoRA job on one node: well under one sample a second
    line = _line(out, "Input pipeline:")
    shown = float(re.search(r"([\d.,]+) samples/s per node", line).group(1).replace(",", ""))
    assert shown == pytest.approx(demand["samples_per_s_per_node"], rel=0.05)
    cores = float(re.search(r"([\d.,]+) cores", line).group(1))
    assert cores == pytest.approx(demand["cores_needed_per_node"], rel=0.05)
    assert " 0 samples/s" not in line and "0.00 GB/s" not in line and " 0.0 cores" not in line


def test_the_blended_cost_says_which_blend_it_is(capsys):
    rc, out, err = run(capsys, *LORA)
    rc, js, err = run(capsys, *LORA, "--json")
    cost = json.loads(js)["cost"]
    line = _line(out, "Cost:")
    assert f"${cost['usd']:,.0f} at on-demand prices" in line
    assert "mix $" not in line
    assert f"at a blend of prices (20% on-demand + 80% 1-year reserved; --price-mix): ${cost['usd_mix']:,.0f}" in line
    rc, out, err = run(capsys, *LORA, "--price-mix", "on_demand=0.5,spot=0.5", "--price", "spot")
    line = _line(out, "Cost:")
    assert "at spot prices" in line and "(50% on-demand + 50% spot; --price-mix)" in line
