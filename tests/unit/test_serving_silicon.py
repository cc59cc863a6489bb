"""The real serving measurements of ``accuracy/serve_silicon.py`` (aiconfigurator's silicon_sample.csv,
aggregated rows, tests/data/serving_silicon_aic.csv): every row is complete and maps onto a serve request,
and a sample of them estimates. Accuracy is reported in docs/validation_sections/30-serving.md, not
asserted here."""
import math
import os

from accuracy import serve_silicon
from planner_app.specdb.catalog import shipped_db

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

ROWS = serve_silicon.load()


def test_every_row_is_measured_and_maps_onto_a_request():
    assert len(ROWS) > 3000
    for r in ROWS:
        assert float(r["silicon_ttft_ms"]) > 0 and float(r["silicon_tpot_ms"]) > 0, r["id"]
        assert r["backend"] in ("vllm", "sglang", "trtllm") and int(r["batch_size"]) >= 1, r["id"]
        req = serve_silicon.request(r)
        assert req.gpu and req.tp >= 1 and req.attention_dp >= 1 and req.ep >= 1, r["id"]
        if req.model.endswith(".json"):
            assert os.path.exists(req.model), req.model


def test_a_sample_estimates_or_says_why_not():
    sample = ROWS[::150]
    res = serve_silicon.compare(sample, shipped_db())
    assert len(res) == len(sample)
    estimated = [(r, e) for r, e, why in res if e is not None]
    assert len(estimated) >= 0.9 * len(sample)
    for r, e in estimated:
        assert math.isfinite(e["tpot_ms"]) and e["tpot_ms"] > 0 and e["ttft_ms"] > 0, r["id"]
    assert all(why for _, e, why in res if e is None)


def test_clients_are_the_runs_concurrency_where_attention_dp_splits_the_batch():
    base = {"batch_size": "32", "attention_dp_size": "4", "silicon_concurrency": "128"}
    assert serve_silicon.concurrency(base) == 128  # 32 per rank x 4 ranks
    assert serve_silicon.concurrency({**base, "attention_dp_size": "1", "silicon_concurrency": "32"}) == 32
    assert serve_silicon.concurrency({**base, "silicon_concurrency": ""}) == 32  # no provenance: batch_size
    adp_rows = [r for r in ROWS if int(r["attention_dp_size"] or 0) > 1
                and r["silicon_concurrency"] == str(int(r["batch_size"]) * int(r["attention_dp_size"]))]
    assert adp_rows and all(serve_silicon.request(r).concurrency > int(r["batch_size"]) for r in adp_rows)


def test_rows_whose_clients_the_layout_does_not_explain_are_left_out():
    db = shipped_db()
    odd = [r for r in ROWS if r["silicon_concurrency"]
           and int(r["silicon_concurrency"]) not in (int(r["batch_size"]),
                                                     int(r["batch_size"]) * (int(r["attention_dp_size"] or 0) or 1))]
    assert odd
    assert all(serve_silicon.excluded(r, db).startswith("concurrency ambiguous") for r in odd)


def test_a_measurement_repeated_under_a_larger_layout_is_matched_on_its_clients():
    """A DeepSeek-R1 run at tp 1 x attention-dp 8 (batch 8 per rank, 64 clients) appears again as attention-dp 64
    with batch 1: the same 64 clients and the same TTFT and TPOT; the 64-GPU reading is the one left out."""
    pair = [r for r in ROWS if r["id"].endswith(("_fp4_agg_1024x1024_c64_tp8_0_ep8_0_976",
                                                 "_fp4_agg_1024x1024_c64_tp8_ep8_937"))]
    assert len(pair) == 2 and {r["batch_size"] for r in pair} == {"8", "1"}
    assert {serve_silicon.concurrency(r) for r in pair} == {64}
    reps = serve_silicon.repeated(ROWS)
    assert {r["id"] for r in pair if r["id"] in reps} == {next(r["id"] for r in pair if r["attention_dp_size"] == "64")}
