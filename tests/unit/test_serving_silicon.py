"""The real serving measurements of ``benchmarks/serve_silicon.py`` (aiconfigurator's silicon_sample.csv,
aggregated rows, tests/data/serving_silicon_aic.csv): every row is complete and maps onto a serve request,
and a sample of them estimates. Accuracy is reported in docs/validation_sections/30-serving.md, not
asserted here."""
import math
import os
import sys

from planner_app.specdb.catalog import shipped_db

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import serve_silicon  # noqa: E402

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
