"""accuracy/multi_accuracy.py on a synthetic run of benchmarks/gpu/gpu_multi_runs.py (the mapping of
each multi-GPU case to estimate options, not the engine's accuracy), and the interval arithmetic
behind the exposed communication time."""
import json
import os
import shlex

import pytest

from accuracy import multi_accuracy
from benchmarks.gpu import gpu_multi_runs
from planner_app import cli
from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES
from planner_app.service.catalog import open_catalog

WORLD = 4


def _ranks(peak_gb, step_ms, comm_ms, status="ok", error=None, wrap=None):
    out = []
    for r in range(WORLD):
        if status != "ok":
            out.append({"rank": r, "status": status, "error": error})
            continue
        out.append({"rank": r, "status": "ok", "peak_bytes_net": peak_gb * 1e9 * (1 + 0.01 * r),
                    "step_ms_median": step_ms + r, "exposed_comm_ms": comm_ms * (1 + r), "local_param_numel": 1,
                    "wrap": wrap or {}})
    return out


def _synthetic():
    cases = []
    for c in gpu_multi_runs.CASES:
        case = dict(c)
        if case.get("mesh") == "hybrid":
            case["hsdp_replicate"] = 2
        if case["kind"] == "deepspeed" and case["zero"] == 3:
            case.update(status="skipped", ranks=_ranks(0, 0, 0, "skipped", "deepspeed not installed"))
        else:
            case.update(status="ok", ranks=_ranks(20.0, 500.0, 10.0))
        cases.append(case)
    return {"info": {"world_size": WORLD, "device": "cuda", "overrides": {}}, "cases": cases}


@pytest.fixture(scope="module")
def rows():
    return {r["name"]: r for r in multi_accuracy.rows_for(_synthetic(), open_catalog())}


def test_each_kind_maps_to_its_zero_stage_framework_and_layout(rows):
    o = {n: r["options"] for n, r in rows.items()}
    assert (o["ddp-1b"]["zero"], o["ddp-1b"]["dp"], o["ddp-1b"]["framework"]) == (0, WORLD, "pytorch")
    assert (o["fsdp2-full-7b"]["zero"], o["fsdp2-full-7b"]["dp"], o["fsdp2-full-7b"]["recipe"]) == (3, WORLD, "bf16")
    assert o["fsdp2-full-offload-1b"]["offload"] == "params" and "offload" not in o["fsdp2-full-1b"]
    # hybrid (2 replicas x 2 shards): every rank data-parallel, ZeRO-3 within shard groups of 2
    h = o["fsdp2-hybrid-1b"]
    assert (h["dp"], h["gpus"], h["zero"], h["dp_shard"]) == (WORLD, WORLD, 3, WORLD // 2)
    assert "--dp-shard 2" in rows["fsdp2-hybrid-1b"]["note"]
    assert o["fsdp2-hybrid-offload-1b"]["offload"] == "params" and o["fsdp2-hybrid-offload-1b"]["dp_shard"] == 2
    assert o["fsdp2-full-mp-1b"]["recipe"] == "mixed-bf16"
    for z in (1, 2, 3):
        d = o[f"ds-zero{z}-1b"]
        assert (d["framework"], d["zero"], d["recipe"], d["dp"]) == ("deepspeed", z, "mixed-bf16", WORLD)
        assert "optimizer_impl" not in d
    assert (o["tp-7b"]["tp"], o["tp-7b"]["dp"], o["tp-7b"].get("sequence_parallel")) == (WORLD, 1, None)
    assert (o["tp-sp-7b"]["tp"], o["tp-sp-7b"]["sequence_parallel"]) == (WORLD, True)
    for name, opts in o.items():
        assert opts["gpus_per_node"] == opts["gpus"], name  # one host
        assert opts["micro_batch"] == gpu_multi_runs.BY_NAME[name]["micro_batch"]


def test_rows_compare_the_most_loaded_rank_and_say_why_a_case_is_missing(rows):
    r = rows["ddp-1b"]
    assert r["measured"]["peak_bytes"] == pytest.approx(20e9 * 1.03)  # rank 3 is the most loaded
    assert r["measured"]["step_ms"] == 503 and r["measured"]["exposed_comm_ms"] == 40
    assert r["error"]["peak"] == pytest.approx(r["estimate"]["peak_bytes"] / (20e9 * 1.03) - 1)
    assert r["error"]["step"] == pytest.approx(r["estimate"]["step_ms"] / 503 - 1)
    assert "estimate" not in rows["ds-zero3-1b"] and rows["ds-zero3-1b"]["why"] == "deepspeed not installed"
    # a CPU run is mapped, never compared
    data = _synthetic()
    data["info"]["device"] = "cpu"
    cpu = multi_accuracy.rows_for(data, open_catalog())
    assert all("estimate" not in x for x in cpu) and cpu[0]["why"] == "cpu run: mapping only"


@pytest.mark.parametrize("name", ["fsdp2-full-offload-1b", "ds-zero2-1b", "tp-sp-7b", "fsdp2-hybrid-1b"])
def test_the_printed_command_reproduces_the_row(rows, name, capsys, monkeypatch):
    monkeypatch.chdir(os.path.join(os.path.dirname(__file__), "..", ".."))  # the model path is relative to the root
    row = rows[name]
    words = shlex.split(row["command"])
    assert words[:2] == ["gpu-planner", "estimate"]
    assert cli.main(words[1:] + ["--json"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert est["memory"]["peak_bytes"] - CUBLAS_WORKSPACE_BYTES == pytest.approx(row["estimate"]["peak_bytes"])
    assert est["time"]["step_s"] * 1e3 == pytest.approx(row["estimate"]["step_ms"])


def test_markdown_lists_cases_outside_the_bar(rows):
    text = multi_accuracy.markdown(list(rows.values()))
    assert text.count("\n| ") == len(rows)  # one table row per case
    far = [n for n, r in rows.items() if "error" in r and (abs(r["error"]["peak"]) > 0.08 or abs(r["error"]["step"]) > 0.15)]
    line = [x for x in text.splitlines() if x.startswith("outside")][0]
    assert all(f"{n} (w{WORLD})" in line for n in far) and (far or line.endswith("none"))


def test_exposed_communication_is_comm_time_not_covered_by_compute():
    comm = [(0, 10), (5, 15), (30, 40)]  # union: [0, 15] and [30, 40] = 25
    comp = [(2, 4), (8, 12), (35, 50)]  # covers 2 + 4 of the first, 5 of the second
    assert gpu_multi_runs.covered(comm) == 25
    assert gpu_multi_runs.exposed(comm, comp) == 25 - 6 - 5
    assert gpu_multi_runs.exposed(comm, []) == 25 and gpu_multi_runs.exposed([], comp) == 0
    assert gpu_multi_runs.exposed([(0, 10)], [(-5, 20)]) == 0


def test_trace_intervals_split_nccl_kernels_from_compute():
    trace = {"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "ts": 0, "dur": 10},
        {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "ts": 4, "dur": 10},
        {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": 0, "dur": 3},
        {"ph": "i", "cat": "kernel", "name": "nccl marker", "ts": 0}]}
    comm, comp = gpu_multi_runs.trace_intervals(trace, "cuda")
    assert comm == [(0.0, 10.0)] and comp == [(4.0, 14.0)]
    assert gpu_multi_runs.exposed(comm, comp) == 4
    comm, comp = gpu_multi_runs.trace_intervals(trace, "cpu")
    assert comm == [(0.0, 3.0)] and comp == []


def test_case_names_and_overrides_are_checked():
    with pytest.raises(SystemExit, match="unknown nope; allowed: all or ddp-1b"):
        gpu_multi_runs.selected("ddp-1b,nope")
    assert gpu_multi_runs.parse_overrides("num_hidden_layers=2,rope_scaling=null,x=abc") == {
        "num_hidden_layers": 2, "rope_scaling": None, "x": "abc"}
    with pytest.raises(SystemExit, match="not key=value"):
        gpu_multi_runs.parse_overrides("layers")
