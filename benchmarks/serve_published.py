"""Serving estimates against published serving throughput (issue 15). Prints one Markdown row per
case of tests/data/serving_published.json (the source, its commit and the date it was read are in
the file) and the error summary::

    python benchmarks/serve_published.py

Each case is a max-throughput run (every request queued at once): the estimate is
``gpu-planner serve --engine trtllm --concurrency 100000`` (saturated: the throughput at the
largest concurrency the KV pool and max_num_seqs hold), FP8 weights and FP8 KV cache (ModelOpt
FP8 checkpoints quantise the KV cache too), TensorRT-LLM's defaults max_batch_size 2048 and
max_num_tokens 8192, 90% of memory. Nothing is fitted to these numbers.
"""
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from planner_app.service.serving import ServeRequest, run_serve  # noqa: E402
from planner_app.specdb.catalog import shipped_db  # noqa: E402

TRTLLM_MAX_BATCH_SIZE = 2048  # TensorRT-LLM BuildConfig defaults as documented for v0.1x (not re-read here)
TRTLLM_MAX_NUM_TOKENS = 8192


def compare():
    with open(os.path.join(HERE, "..", "tests", "data", "serving_published.json")) as f:
        data = json.load(f)
    db = shipped_db()
    rows = []
    for c in data["cases"]:
        out = run_serve(ServeRequest(model=c["model"], gpu=c["gpu"], tp=c["tp"], isl=c["isl"], osl=c["osl"],
                                     concurrency=100000, weights_dtype="fp8", kv_dtype="fp8", engine="trtllm",
                                     max_num_seqs=TRTLLM_MAX_BATCH_SIZE,
                                     max_num_batched_tokens=TRTLLM_MAX_NUM_TOKENS), db)
        est = out["output_tokens_per_s"]
        run_max = out["max_concurrency"]
        rows.append((c, est, run_max, est / c["output_tokens_per_s"] - 1))
    lat = []
    for c in data.get("latency_cases", []):
        out = run_serve(ServeRequest(model=c["model"], gpu=c["gpu"], tp=c["tp"], isl=c["isl"], osl=c["osl"],
                                     concurrency=c["concurrency"], weights_dtype="fp8", kv_dtype="fp8",
                                     engine="trtllm", max_num_seqs=TRTLLM_MAX_BATCH_SIZE,
                                     max_num_batched_tokens=TRTLLM_MAX_NUM_TOKENS), db)
        lat.append((c, out))
    return data["source"], rows, data.get("latency_source"), lat


def main():
    src, rows, lat_src, lat = compare()
    print(f"Source: {src['url']} (read {src['read']})\n")
    print("| model | GPU | TP | ISL/OSL | published tok/s | estimate tok/s | running | error |")
    print("|---|---|---|---|---:|---:|---:|---:|")
    for c, est, run_max, err in rows:
        print(f"| {c['model']} | {c['gpu']} | {c['tp']} | {c['isl']}/{c['osl']} | {c['output_tokens_per_s']:,} | "
              f"{est:,.0f} | {run_max:,} | {err * 100:+.1f}% |")
    errs = [abs(e) for *_, e in rows]
    within = sum(e <= 0.15 for e in errs)
    print(f"\n{len(rows)} cases: median |error| {statistics.median(errs) * 100:.1f}%, 90th percentile "
          f"{sorted(errs)[int(0.9 * len(errs)) - 1] * 100:.1f}%, {within} within 15%")
    by = {}
    for c, est, _, err in rows:
        by.setdefault((c["model"], c["gpu"]), []).append(err)
    for k, v in by.items():
        print(f"  {k[0]} on {k[1]}: median error {statistics.median(v) * 100:+.1f}%")

    if lat:
        print(f"\nLatency: {lat_src['url']} (read {lat_src['read']})\n")
        print("| ISL/OSL | concurrency | TTFT ms pub / est | TPOT ms pub / est | out tok/s pub / est "
              "| saturated (est) |")
        print("|---|---:|---:|---:|---:|---|")
        tp_err, ttft_err = [], []
        for c, o in lat:
            e_tpot = o["tpot_ms"] / c["tpot_ms"] - 1
            e_ttft = o["ttft_ms"] / c["ttft_ms"] - 1
            e_tps = o["output_tokens_per_s"] / c["output_tokens_per_s"] - 1
            tp_err.append(abs(e_tpot))
            ttft_err.append(abs(e_ttft))
            print(f"| {c['isl']}/{c['osl']} | {c['concurrency']} | {c['ttft_ms']:,.0f} / {o['ttft_ms']:,.0f} "
                  f"({e_ttft * 100:+.0f}%) | {c['tpot_ms']:.1f} / {o['tpot_ms']:.1f} ({e_tpot * 100:+.0f}%) | "
                  f"{c['output_tokens_per_s']:,.0f} / {o['output_tokens_per_s']:,.0f} ({e_tps * 100:+.0f}%) | "
                  f"{'yes' if o['saturated'] else 'no'} (max {o['max_concurrency']}) |")
        print(f"\nTPOT median |error| {statistics.median(tp_err) * 100:.1f}%, TTFT median |error| "
              f"{statistics.median(ttft_err) * 100:.1f}%")


if __name__ == "__main__":
    main()
