"""The published MoE serving points (tests/data/serving_published.json ``moe_cases``, compared by
``accuracy/serve_published.py --moe``): the file parses, every point names its source, and every
point is expressible (the serve estimate runs with its layout). Accuracy is reported in
docs/validation_sections/30-serving.md, not asserted here."""
import json
import os

import pytest

from accuracy import serve_published
from planner_app.specdb.catalog import shipped_db

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

with open(os.path.join(ROOT, "tests", "data", "serving_published.json")) as _f:
    DATA = json.load(_f)
KEYS = {"source", "model", "gpu", "tp", "ep", "attention_dp", "weights_dtype", "kv_dtype", "isl", "osl", "metric",
        "published"}


def test_every_moe_point_is_complete_and_sourced():
    sources = DATA["moe_sources"]
    for key, src in sources.items():
        assert src["url"].startswith("https://github.com/") and src["commit"] in src["url"], key
        assert src["read"] and src["engine"] in ("trtllm", "vllm", "sglang"), key
    cases = DATA["moe_cases"]
    assert len(cases) >= 100
    for c in cases:
        assert KEYS <= set(c), c
        assert c["source"] in sources
        assert c["metric"] in ("output_tokens_per_s", "output_tokens_per_s_per_gpu")
        assert c["published"] > 0 and c["isl"] > 0 and c["osl"] > 0
        assert (c["tp"] * c["attention_dp"]) % c["ep"] == 0
        if c["model"].endswith(".json"):
            assert os.path.exists(os.path.join(ROOT, c["model"])), c["model"]
    # each (source, model, GPU, layout, precision, ISL/OSL) appears once: no transcription duplicates
    ident = [(c["source"], c["model"], c["gpu"], c["tp"], c["ep"], c["attention_dp"], c["weights_dtype"],
              c["kv_dtype"], c["isl"], c["osl"]) for c in cases]
    assert len(set(ident)) == len(ident)


def test_every_moe_point_is_expressible():
    sources, rows = serve_published.compare_moe(DATA, shipped_db())
    assert len(rows) == len(DATA["moe_cases"])
    models = set()
    for c, out, err in rows:
        assert out["fits"], c
        assert out["deployment"]["ep"] == c["ep"] and out["deployment"]["attention_dp"] == c["attention_dp"]
        assert out[c["metric"]] > 0 and err == pytest.approx(out[c["metric"]] / c["published"] - 1)
        # TensorRT-LLM's KV fraction is of the free memory: the engine's use lies between the fixed part and all of it
        b = out["memory"]["breakdown"]
        fixed = b["weights"] + b["activation_workspace"] + b["cuda_graphs"] + b["other"]
        assert fixed < out["memory"]["device_bytes"] <= out["memory"]["capacity_bytes"] * (1 + 1e-9)
        models.add(c["model"])
    assert len(models) >= 4  # DeepSeek-V3/R1, Qwen3-235B-A22B, Qwen3-30B-A3B, gpt-oss
