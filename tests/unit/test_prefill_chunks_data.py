"""Prefill throughput against chunk size on the H200 (tests/data/prefill_chunks_h200_*.json,
benchmarks/gpu/gpu_prefill_chunks.py) and the serving step's prefill charge against it
(accuracy/prefill_accuracy.py)."""
import os

from accuracy import prefill_accuracy as acc

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_both_models_measured_at_every_chunk():
    assert len(acc.DATA) == 2
    for path in acc.DATA:
        info, rows = acc.rows(path)
        assert [c for c, *_ in rows] == [128, 256, 512, 1024, 2048, 4096, 8192, 16384], path
        for c, fused, unfused, est, _ in rows:
            assert 0 < fused <= unfused * 1.05, (path, c)  # fusing the element-wise work never costs time
            assert est > 0


def test_the_step_charges_the_profiled_gemms_and_attention_of_a_prompt_chunk():
    """At the profiled chunks (2K and 8K tokens of Llama-3.1-8B) the step's GEMM term is within 10% of the
    GEMM kernels and its attention within 35% of FlashAttention's; the whole step within 25% of the fused
    forward at every chunk of 512 tokens or more."""
    profiled = 0
    for path in acc.DATA:
        _, rows = acc.rows(path)
        for c, fused, _u, est, classes in rows:
            if c >= 512:
                assert abs(est / fused - 1) < 0.25, (path, c)
            if classes:
                profiled += 1
                m, e = classes["dense_gemm"]
                assert abs(e / m - 1) < 0.10, c
                m, e = classes["attention"]
                assert abs(e / m - 1) < 0.35, c
    assert profiled == 2
