"""Serving precisions against the GPU (issue 15, core/serving/support.py): what a GPU cannot run is
refused by ``serve`` (exit 2, one line naming the field and what that GPU allows) and skipped by the
SLO search (with a note); the table itself is consistent and every shipped GPU has an architecture."""
import dataclasses

import pytest
from serve_case import run_serve, run_slo_search  # noqa: E402 (tests/unit is on sys.path)

from planner_app.cli import main
from planner_app.core.errors import InputError
from planner_app.core.requests import ServeRequest
from planner_app.core.serving import engine as sv
from planner_app.core.serving import support
from planner_app.core.serving.search import request_for_search
from planner_app.specdb.catalog import shipped_db
from planner_app.specdb.schema import SpecDataError


@pytest.fixture(scope="module")
def db():
    return shipped_db()


def _serve_cli(capsys, *args):
    rc = main(["serve", "--model", "llama-3.1-8b", "--isl", "1024", "--osl", "128", "--concurrency", "8",
               "--json", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err.strip()


@pytest.mark.parametrize("args, flag, allowed", [
    (["--gpu", "v100-sxm2-32gb", "--weights-dtype", "fp8"], "--weights-dtype", "allowed on it: bf16, int8, int4"),
    (["--gpu", "a100-sxm-80gb", "--engine", "trtllm", "--kv-dtype", "fp8"], "--kv-dtype", "allowed on it: bf16"),
    (["--gpu", "a100-sxm-80gb", "--engine", "trtllm", "--weights-dtype", "fp8"], "--weights-dtype",
     "allowed on it: bf16, int8, int4"),
    (["--gpu", "a100-sxm-80gb", "--engine", "trtllm", "--weights-dtype", "fp4"], "--weights-dtype",
     "allowed on it: bf16, int8, int4"),
    (["--gpu", "mi250x", "--weights-dtype", "fp8"], "--weights-dtype", "gfx90a: allowed on it: bf16"),
    (["--gpu", "mi300x", "--weights-dtype", "int4"], "--weights-dtype", "allowed on it: bf16, fp8"),
    (["--gpu", "t4", "--engine", "trtllm"], "--engine", "engines that run on it: vllm, sglang"),
    (["--gpu", "v100-sxm2-32gb", "--engine", "sglang"], "--engine", "engines that run on it: vllm"),
    (["--gpu", "mlu370-x8"], "--engine", "none of vllm, sglang, trtllm"),
])
def test_serve_refuses_what_the_gpu_cannot_run(capsys, args, flag, allowed):
    rc, out, err = _serve_cli(capsys, *args)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1
    assert flag in err and allowed in err


@pytest.mark.parametrize("args, note", [
    (["--gpu", "a100-sxm-80gb", "--weights-dtype", "fp8", "--kv-dtype", "fp8"], "fp8_e5m2"),
    (["--gpu", "a100-sxm-80gb", "--weights-dtype", "fp8"], "no fp8 tensor cores"),
    (["--gpu", "h100-sxm", "--weights-dtype", "fp4"], "no fp4 tensor cores"),
    (["--gpu", "v100-sxm2-32gb"], "needs an earlier vLLM"),
    (["--gpu", "mi300x", "--weights-dtype", "fp8", "--kv-dtype", "fp8"], None),
    (["--gpu", "b200", "--weights-dtype", "fp4", "--engine", "trtllm"], None),
])
def test_what_runs_is_served_with_a_note_on_how(capsys, args, note):
    import json
    rc, out, err = _serve_cli(capsys, *args)
    assert rc == 0, err
    text = "\n".join(json.loads(out)["assumptions"])
    if note:
        assert note in text
    else:  # native: no fallback note
        assert "tensor cores" not in text and "fp8_e5m2" not in text


def test_fallback_gemms_run_at_the_16_bit_rate(db):
    h100, b200, a100 = db.gpu("h100-sxm"), db.gpu("b200"), db.gpu("a100-sxm-80gb")
    assert support.gemm_bits(h100, "fp4", sv.GEMM_BITS["fp4"]) == 16
    assert support.gemm_bits(b200, "fp4", sv.GEMM_BITS["fp4"]) == 8
    assert support.gemm_bits(h100, "fp8", sv.GEMM_BITS["fp8"]) == 8
    assert support.gemm_bits(a100, "fp8", sv.GEMM_BITS["fp8"]) == 16
    # prefill-heavy, compute-bound: fp4 on an H100 (W4A16 Marlin) is no faster than int4, not at the fp8 rate
    kw = dict(model="llama-3.1-8b", gpu="H100 SXM", isl=8192, osl=16, concurrency=64)
    fp4 = run_serve(ServeRequest(weights_dtype="fp4", **kw), db)
    fp8 = run_serve(ServeRequest(weights_dtype="fp8", **kw), db)
    int4 = run_serve(ServeRequest(weights_dtype="int4", **kw), db)
    assert fp4["ttft_ms"] == pytest.approx(int4["ttft_ms"], rel=0.05)
    assert fp4["ttft_ms"] > fp8["ttft_ms"] * 1.1


def test_the_table_covers_every_engine_and_precision():
    for engine, eng in support.ENGINES.items():
        assert eng.source
        for table, dtypes in ((support.WEIGHTS, sv.SERVE_WEIGHT_DTYPES), (support.KV, sv.SERVE_KV_DTYPES)):
            for d in dtypes:
                need = table[(engine, d)]
                assert need.source and need.kernel
                # a precision never runs where its engine does not
                assert need.min_cc is None or need.min_cc >= eng.min_cc, (engine, d)
                assert set(need.archs) <= set(eng.archs), (engine, d)
    assert set(support.ENGINES) == set(sv.ENGINE_NAMES)


def test_every_shipped_gpu_has_an_architecture(db):
    for r in db.records["gpus"]:
        gpu = db.gpu(r["id"])
        assert gpu.arch, r["id"]
        if r["vendor"] == "NVIDIA":
            assert gpu.compute_capability and 70 <= gpu.compute_capability <= 120, r["id"]
        else:
            assert gpu.compute_capability is None
    assert db.gpu("h100-sxm").compute_capability == 90 and db.gpu("b300").compute_capability == 103


def test_unknown_architecture_is_not_refused_but_said(db):
    gpu = dataclasses.replace(db.gpu("a100-sxm-80gb"), arch="")
    notes = support.check(gpu, "trtllm", "fp4", "fp8")
    assert len(notes) == 1 and "not checked" in notes[0]
    assert support.allowed(gpu, "trtllm", support.WEIGHTS) == list(sv.SERVE_WEIGHT_DTYPES)


def test_a_bad_arch_in_a_users_row_names_the_column(tmp_path):
    from planner_app.specdb.userdb import UserDB
    udb = UserDB(str(tmp_path / "user.sqlite"))
    row = {c: v for c, v in shipped_db().records["gpus"][0].items() if v not in (None, "") and c != "origin"}
    with pytest.raises(SpecDataError, match="arch"):
        udb.validate_row("gpus", {**row, "arch": "Volta 7.0"})
    assert udb.validate_row("gpus", {**row, "arch": "sm_75"})["arch"] == "sm_75"


def test_slo_search_skips_what_the_engine_cannot_run_and_says_so(db):
    req = request_for_search(ServeRequest(model="llama-3.1-8b", isl=1024, osl=256, concurrency=32, engine="trtllm"))
    machines = (("instance", "p4de.24xlarge"), ("instance", "GN10Xp.20XLARGE320"))
    res = run_slo_search(req, machines, 5000.0, 200.0, db, top=500, quantized=True)
    plans = res.cheapest + res.pareto
    assert plans and {p["machine"] for p in plans} == {"p4de.24xlarge"}
    assert not [p for p in plans if p["weights_dtype"] == "fp8" or p["kv_dtype"] == "fp8"]
    notes = "\n".join(res.notes)
    assert "GN10Xp.20XLARGE320: skipped" in notes and "fp8 weights, fp8 KV cache skipped" in notes
    with pytest.raises(InputError) as e:
        run_slo_search(req, machines[1:], 5000.0, 200.0, db)
    assert e.value.field == "engine"


def test_slo_search_keeps_every_precision_where_all_run(db):
    req = request_for_search(ServeRequest(model="llama-3.1-8b", isl=1024, osl=256, concurrency=32))
    res = run_slo_search(req, (("gpu", "B200"),), 5000.0, 200.0, db, top=2000, quantized=True)
    assert not [n for n in res.notes if "skipped" in n]
    assert {p["weights_dtype"] for p in res.cheapest} == {"bf16", "fp8", "int4", "fp4"}


def test_slo_search_on_a_gpu_of_unknown_architecture_tries_everything_and_says_so(db):
    from planner_app.core.serving.search import search_dtypes
    gpu = dataclasses.replace(db.gpu("a100-sxm-80gb"), arch="")
    wds, kds, notes = search_dtypes(gpu, "trtllm", quantized=True)
    assert wds == ["bf16", "fp8", "int4"] and kds == list(sv.SERVE_KV_DTYPES)
    assert len(notes) == 1 and "not checked" in notes[0]
    known = search_dtypes(db.gpu("a100-sxm-80gb"), "trtllm", quantized=True)
    assert known[:2] == (["bf16", "int4"], ["bf16"]) and "skipped" in known[2][0]
