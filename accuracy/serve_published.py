"""Serving estimates against published serving throughput (issue 15). Prints one Markdown row per
case of tests/data/serving_published.json (the source, its commit and the date it was read are in
the file) and the error summary::

    python -m accuracy.serve_published

Each case is a max-throughput run (every request queued at once): the estimate is
``gpu-planner serve --engine trtllm --concurrency 100000`` (saturated: the throughput at the
largest concurrency the KV pool and max_num_seqs hold), FP8 weights and FP8 KV cache (ModelOpt
FP8 checkpoints quantise the KV cache too), TensorRT-LLM's defaults max_batch_size 2048 and
max_num_tokens 8192, KV cache in 90% of the free memory. Nothing is fitted to these numbers.

The MoE cases (``moe_cases``, sources in ``moe_sources``) state their own layout (tp, ep,
attention-dp), weight and KV precision and, where the source gives them, max_batch_size,
max_num_tokens, kv_cache_free_gpu_mem_fraction and the concurrency. TensorRT-LLM's KV fraction is a
share of the memory left free after the weights and the activation profile
(``KvCacheConfig.free_gpu_memory_fraction``, default 0.9: "allocate 90% of free GPU memory for KV
cache", nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html); the planner's ``--engine trtllm``
reads ``gpu_memory_utilization`` that way (core/serving/engine.py EngineConstants.kv_fraction_of_free), so the
cases pass it as it is.
"""
import json
import os
import statistics
import sys

from planner_app.core.requests import ServeRequest
from planner_app.service import serving
from planner_app.specdb.catalog import shipped_db

HERE = os.path.dirname(os.path.abspath(__file__))


def run_serve(req, db) -> dict:
    return serving.run_serve(req, db).to_json()


TRTLLM_MAX_BATCH_SIZE = 2048  # TensorRT-LLM BuildConfig defaults as documented for v0.1x (not re-read here)
TRTLLM_MAX_NUM_TOKENS = 8192
TRTLLM_KV_FREE_FRACTION = 0.9  # KvCacheConfig.free_gpu_memory_fraction default (see the docstring)
ROOT = os.path.join(HERE, "..")


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


def _moe_request(c, gmu):
    model = c["model"]
    if model.endswith(".json"):
        model = os.path.join(ROOT, model)
    return ServeRequest(model=model, gpu=c["gpu"], tp=c["tp"], ep=c["ep"], attention_dp=c["attention_dp"],
                        isl=c["isl"], osl=c["osl"], concurrency=c.get("concurrency") or 100000,
                        weights_dtype=c["weights_dtype"], kv_dtype=c["kv_dtype"], engine="trtllm",
                        gpu_memory_utilization=gmu, max_num_seqs=c.get("max_num_seqs", TRTLLM_MAX_BATCH_SIZE),
                        max_num_batched_tokens=c.get("max_num_batched_tokens", TRTLLM_MAX_NUM_TOKENS))


def compare_moe(data=None, db=None, key="moe_cases"):
    """One (case, estimate JSON, error) per MoE case (or per case of ``key``: the dense Blackwell FP4
    control), at the case's TensorRT-LLM free-memory fraction for the KV cache."""
    if data is None:
        with open(os.path.join(ROOT, "tests", "data", "serving_published.json")) as f:
            data = json.load(f)
    db = db or shipped_db()
    rows = []
    for c in data[key]:
        out = run_serve(_moe_request(c, c.get("kv_cache_free_gpu_mem_fraction", TRTLLM_KV_FREE_FRACTION)), db)
        rows.append((c, out, out[c["metric"]] / c["published"] - 1))
    return data["moe_sources"], rows


def _summary(errs) -> str:
    errs = sorted(abs(e) for e in errs)
    p90 = errs[max(int(0.9 * len(errs)) - 1, 0)]
    return (f"{len(errs)} points: median |error| {statistics.median(errs) * 100:.1f}%, 90th percentile "
            f"{p90 * 100:.1f}%, {sum(e <= 0.15 for e in errs)} within 15%")


def main_moe():
    sources, rows = compare_moe()
    for key, src in sources.items():
        mine = [r for r in rows if r[0]["source"] == key]
        print(f"\n#### {key}: {src['url']} (read {src['read']})\n")
        per_gpu = mine[0][0]["metric"].endswith("per_gpu")
        unit = "tok/s/GPU" if per_gpu else "tok/s"
        print(f"| model | GPU | tp/ep/adp | W/KV | ISL/OSL | published {unit} | estimate {unit} | running | error |")
        print("|---|---|---|---|---|---:|---:|---:|---:|")
        for c, o, err in mine:
            name = os.path.basename(c["model"]).removesuffix(".json")
            print(f"| {name} | {c['gpu']} | {c['tp']}/{c['ep']}/{c['attention_dp']} | "
                  f"{c['weights_dtype']}/{c['kv_dtype']} | {c['isl']}/{c['osl']} | {c['published']:,} | "
                  f"{o[c['metric']]:,.0f} | {o['running_requests']:,.0f} | {err * 100:+.1f}% |")
        print(f"\n{_summary([e for *_, e in mine])}")
        by = {}
        for c, _, err in mine:
            by.setdefault((os.path.basename(c["model"]).removesuffix(".json"), c["gpu"]), []).append(err)
        for k, v in by.items():
            print(f"  {k[0]} on {k[1]}: median error {statistics.median(v) * 100:+.1f}% ({len(v)})")
        for c, o, _ in mine:
            if c.get("note"):
                print(f"  note {c['gpu']} {c['weights_dtype']}/{c['kv_dtype']}: estimate e2e "
                      f"{o['e2e_latency_ms']:,.0f} ms, {o['tokens_per_s_per_user']:.2f} tok/s/user, max concurrency "
                      f"{o['max_concurrency']:,}; published: {c['note']}")
    print(f"\nAll MoE: {_summary([e for *_, e in rows])}")
    _, ctrl = compare_moe(key="dense_fp4_control_cases")
    print("\nDense control, same table and conversion (Llama FP4 on Blackwell, ISL/OSL 128/128 ... 20000/2000):")
    by = {}
    for c, _, err in ctrl:
        by.setdefault((c["model"], c["gpu"], c["tp"]), []).append(err)
    for (m, g, tp), v in by.items():
        print(f"  {m} on {g} TP{tp}: " + " ".join(f"{e * 100:+.0f}%" for e in v)
              + f"; median {statistics.median(v) * 100:+.1f}%")
    print(f"  {_summary([e for *_, e in ctrl])}")


def grouped_gemm_table():
    """Markdown: the expert GEMMs of one MoE layer measured on the H200 at serving row counts
    (tests/data/grouped_gemm_serving_h200.json, benchmarks/gpu/gpu_grouped_gemm_serving.py): fp8 grouped
    TFLOP/s, the expert weights' GB/s, and the dense fp8 GEMM of the same rows."""
    with open(os.path.join(ROOT, "tests", "data", "grouped_gemm_serving_h200.json")) as f:
        pts = json.load(f)["points"]
    shapes = list(dict.fromkeys(p["shape"] for p in pts))
    print("| rows per expert | " + " | ".join(shapes) + " |")
    print("|---:|" + "---:|" * len(shapes))
    for r in sorted({p["rows_per_expert"] for p in pts}):
        cells = []
        for sh in shapes:
            p = next(q for q in pts if q["shape"] == sh and q["rows_per_expert"] == r)
            ms = p["grouped_fp8_ms"]
            cells.append(f"{p['flops'] / ms / 1e9:,.0f} TF, {p['weight_params'] / ms / 1e6:,.0f} GB/s "
                         f"(dense {p['flops'] / p['dense_fp8_ms'] / 1e9:,.0f} TF)")
        print(f"| {r:g} | " + " | ".join(cells) + " |")


def main():
    if "--grouped" in sys.argv:
        grouped_gemm_table()
        return
    if "--moe" in sys.argv:
        main_moe()
        return
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
    for c, _est, _, err in rows:
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
        # the mean a closed-loop benchmark of 10 x concurrency requests would report (serve's benchmark.ttft_ms;
        # the page does not state its run length or statistic)
        bench = [(c, o["benchmark"]["mean_ttft_ms"] / c["ttft_ms"] - 1) for c, o in lat]
        print("TTFT with the opening burst of a 10 x concurrency run (benchmark.mean_ttft_ms): median |error| "
              f"{statistics.median(abs(e) for _, e in bench) * 100:.1f}%; "
              + ", ".join(f"{c['concurrency']}: {e * 100:+.0f}%" for c, e in bench if c["isl"] == 5000))


if __name__ == "__main__":
    main()
