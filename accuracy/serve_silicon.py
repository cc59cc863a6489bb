"""Serving estimates against real serving measurements we did not make and did not fit to (issue 15):
the aggregated ("agg") rows of NVIDIA aiconfigurator's ``silicon_sample.csv``, TTFT and TPOT measured on
H100 / H200 / B200 / B300 / GB200 with vLLM, SGLang and TensorRT-LLM at a fixed concurrency and fixed
ISL/OSL (1k/1k, 1k/8k, 8k/1k and others), for the models this project has a config of.

    python -m accuracy.serve_silicon            # the comparison (tests/data/serving_silicon_aic.csv)
    python -m accuracy.serve_silicon --extract silicon_sample.csv   # rebuild that file from the source
    python -m accuracy.serve_silicon --requests-per-client 20   # the benchmark runs taken 20 x c long

TTFT is compared twice: the planner's steady-state ``ttft_ms``, and ``benchmark.ttft_ms``, the mean a closed-loop
benchmark reports whose c clients start together (core/serving/benchmark.py benchmark_ttft_s). The rows were measured
that way: aiperf (aiconfigurator's benchmark template) drains its warm-up and then issues the c requests of the
profiling phase at once. Their run length is not in the data: NVIDIA's deployment guide states c x 10 requests
(docs/dynamo_deployment_guide.md, the planner's default), the template's default is c x 20 (bench_run.sh.j2).

Source: github.com/ai-dynamo/aiconfigurator (Apache-2.0), ``aic-core/src/aiconfigurator_core/systems/
silicon_sample.csv`` at the commit in ``SOURCE`` below, read 2026-12-02. Each row names its engine image and
the date it was measured; only measured numbers are kept (TTFT and TPOT in ms). Nothing in core/ was fitted
to them.

What the rows do not state, assumed here (the same for every row, and in the printed header):
- KV-cache precision: TensorRT-LLM's quantised checkpoints quantise the KV cache (fp8; ModelOpt's FP8 and
  NVFP4 checkpoints carry ``kv_cache_quant_algo`` FP8); vLLM and SGLang keep ``kv_cache_dtype=auto``
  (the model's 16-bit dtype) unless told, so bf16.
- Engine limits (max_num_seqs, max_num_batched_tokens) and memory fraction: the planner's defaults.
- Weight precision from ``gemm_quant_mode``: nvfp4 -> fp4 (MXFP4 for gpt-oss; W4A16 on Hopper), fp8 and
  fp8_block -> fp8, int4_wo -> int4 (Kimi-K2.5's INT4 experts), empty -> bf16. The planner applies one
  precision to every GEMM; the checkpoints keep attention in bf16 for gpt-oss and Kimi-K2.5.
- Concurrency: ``batch_size`` is each attention-DP rank's batch; the provenance field ``silicon_concurrency``
  (the clients of the run) is batch_size x attention-DP ranks on those rows, and equals batch_size elsewhere.
- Layout: ``tp_size`` x ``attention_dp_size`` GPUs; the experts expert-parallel over ``moe_ep_size`` when it
  is above 1 (``--ep``), tensor-parallel otherwise.
- MiniMax-M2.5 is estimated in Qwen3-MoE form (same dimensions: tests/data/serving_silicon/README.md).

Rows left out of the summary, each counted and named in the output (the physics, not our estimate, rules
them out):
- inconsistent layout: the attention's GPUs (tp x attention-dp) differ from the experts' (moe_tp x moe_ep),
  e.g. "tp 64" rows on one 8-GPU node whose TTFT/TPOT repeat the tp-8 rows of the same run;
- the same measurement under two layouts: a row whose TTFT and TPOT repeat (to 1 us) a row of the same model,
  GPU, engine, lengths and concurrency with fewer GPUs (e.g. "tp 64 / moe 8 x 8" repeating "tp 8 / ep 8":
  the attention's TP written as the product); the smaller layout's row is kept;
- concurrency ambiguous: ``silicon_concurrency`` is neither batch_size nor batch_size x attention-DP ranks
  (e.g. 4 x batch_size on a TensorRT-LLM row without attention DP): the clients per replica are unknown;
- prompts not all computed: the measured request rate times 2 x active parameters x ISL exceeds every
  GPU's densest datasheet peak (FP8, or FP4 where it has one), which no engine can do unless prompts hit
  its prefix cache (vLLM and SGLang cache prefixes by default; a benchmark's synthetic prompts can share them).
"""
import csv
import os
import statistics
import sys

from planner_app.core.errors import InputError
from planner_app.core.requests import ServeRequest
from planner_app.service import serving
from planner_app.specdb.catalog import shipped_db

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")


def run_serve(req, db) -> dict:
    return serving.run_serve(req, db).to_json()


SOURCE = {"repo": "ai-dynamo/aiconfigurator", "commit": "095f58a51c4ca8e61b66ec108d86f223f8d559ce",
          "path": "aic-core/src/aiconfigurator_core/systems/silicon_sample.csv", "read": "2026-12-02",
          "license": "Apache-2.0"}
DATA = os.path.join(ROOT, "tests", "data", "serving_silicon_aic.csv")
CFG = "tests/data/serving_silicon/"
MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b",
    "meta-llama/Llama-3.1-70B": "llama-3.1-70b",
    "Qwen/Qwen3-32B": CFG + "qwen3-32b.json",
    "nvidia/Qwen3-32B-NVFP4": CFG + "qwen3-32b.json",
    "Qwen/Qwen3-235B-A22B-FP8": "tests/data/hf_configs/qwen3-235b-a22b.json",
    "openai/gpt-oss-120b": "tests/data/hf_configs/gpt-oss-120b.json",
    "deepseek-ai/DeepSeek-R1": "deepseek-v3",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
    "nvidia/DeepSeek-R1-NVFP4": "deepseek-v3",
    "nvidia/DeepSeek-V3.1-NVFP4": "deepseek-v3",
    "moonshotai/Kimi-K2.5": CFG + "kimi-k2.5.json",
    "MiniMaxAI/MiniMax-M2.5": CFG + "minimax-m2.5-qwen3moe.json",
}
GPUS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200-sxm", "b200_sxm": "b200", "b300_sxm": "b300", "gb200": "gb200"}
WEIGHTS = {"nvfp4": "fp4", "fp8": "fp8", "fp8_block": "fp8", "int4_wo": "int4", "": "bf16"}
KEEP = ("id", "backend", "backend_version", "model_path", "system", "isl", "osl", "gemm_quant_mode",
        "batch_size", "tp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size", "silicon_ttft_ms",
        "silicon_tpot_ms", "measured", "image", "silicon_concurrency")


def extract(path: str) -> int:
    """Write DATA from the source CSV: aggregated rows of the models in MODELS, measured fields only."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["mode"] != "agg" or r["model_path"] not in MODELS or r["system"] not in GPUS:
                continue
            src = dict(p.strip().split("=", 1) for p in r["silicon_data_source"].split(";") if "=" in p)
            image = src.get("image") or next((p.strip() for p in r["silicon_data_source"].split(";")
                                              if ":" in p and "/" in p and "=" not in p), "")
            r.update(measured=src.get("measured", "")[:10], image=image,
                     silicon_concurrency=src.get("silicon_concurrency", ""))
            rows.append({k: r[k] for k in KEEP})
    tmp = DATA + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=KEEP)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, DATA)
    return len(rows)


def load() -> list[dict]:
    with open(DATA, newline="") as f:
        return list(csv.DictReader(f))


def model_ref(model_path: str) -> str:
    """The planner's preset name or config path for a model of the data."""
    model = MODELS[model_path]
    return os.path.join(ROOT, model) if model.endswith(".json") else model


def concurrency(r: dict) -> int:
    """Clients of the run: the provenance's silicon_concurrency where it is batch_size x attention-DP ranks
    (batch_size is then each rank's max_num_seqs), else batch_size (see ``excluded`` for the others)."""
    c, adp = int(r["batch_size"]), int(r["attention_dp_size"] or 0) or 1
    return c * adp if (r.get("silicon_concurrency") or "") == str(c * adp) else c


REQUESTS_PER_CLIENT = None  # None: the planner's default run length (core/serving/benchmark.py BENCHMARK_REQUESTS_PER_CLIENT)


def request(r: dict) -> ServeRequest:
    model = model_ref(r["model_path"])
    weights = WEIGHTS[r["gemm_quant_mode"]]
    quantised = weights != "bf16"
    ep = int(r["moe_ep_size"] or 0)
    return ServeRequest(model=model, gpu=GPUS[r["system"]], tp=int(r["tp_size"]),
                        attention_dp=int(r["attention_dp_size"] or 0) or 1, ep=ep if ep > 1 else 1,
                        isl=int(r["isl"]), osl=int(r["osl"]), concurrency=concurrency(r),
                        weights_dtype=weights, engine=r["backend"],
                        kv_dtype="fp8" if quantised and r["backend"] == "trtllm" else "bf16",
                        benchmark_requests=REQUESTS_PER_CLIENT and REQUESTS_PER_CLIENT * concurrency(r))


def _gpu_peak_tflops(gpu) -> float:
    """The densest datasheet rate of the GPU (FP4 where it has one, else FP8, else 16-bit)."""
    return max(getattr(gpu, "fp4_tflops", 0.0) or 0.0, gpu.fp8_tflops or 0.0, gpu.peak_tflops(16))


def _gpus(r: dict) -> int:
    return int(r["tp_size"]) * (int(r["attention_dp_size"] or 0) or 1)


def _measurement(r: dict) -> tuple:
    return (r["model_path"], r["system"], r["backend"], r["isl"], r["osl"], concurrency(r),
            round(float(r["silicon_ttft_ms"]), 3), round(float(r["silicon_tpot_ms"]), 3))


def repeated(rows) -> set:
    """ids of rows repeating another row's measurement with more GPUs (see the module docstring)."""
    fewest = {}
    for r in rows:
        k = _measurement(r)
        fewest[k] = min(fewest.get(k, _gpus(r)), _gpus(r))
    return {r["id"] for r in rows if _gpus(r) > fewest[_measurement(r)]}


def _active_params(model_path: str, db, cache: dict) -> tuple:
    """(is MoE, parameters one token passes through), once per model of the data."""
    if model_path not in cache:
        from planner_app.core.serving import engine as sv
        from planner_app.service.resolve import resolve_model
        model = resolve_model(model_ref(model_path), db)
        s = sv.model_shape(model)
        cache[model_path] = (model.is_moe, s.dense_linear + s.active_expert_linear + s.lm_head)
    return cache[model_path]


def excluded(r: dict, db, repeats=frozenset(), cache=None) -> str:
    """Why a row cannot be a steady-state measurement of what it states ("" when it can)."""
    if r["id"] in repeats:
        return "the same measurement under two layouts"
    tp, adp = int(r["tp_size"]), int(r["attention_dp_size"] or 0) or 1
    mtp, mep = int(r["moe_tp_size"] or 0), int(r["moe_ep_size"] or 0)
    is_moe, active = _active_params(r["model_path"], db, {} if cache is None else cache)
    if is_moe and mtp >= 1 and mep >= 1 and tp * adp != mtp * mep:
        return f"inconsistent layout: tp x attention-dp {tp * adp} GPUs, moe_tp x moe_ep {mtp * mep}"
    sc = r.get("silicon_concurrency") or ""
    if sc and int(sc) not in (int(r["batch_size"]), int(r["batch_size"]) * adp):
        return (f"concurrency ambiguous: batch_size {r['batch_size']} but {sc} clients, "
                f"not batch_size x attention-DP ranks ({adp})")
    c, isl, osl = concurrency(r), int(r["isl"]), int(r["osl"])
    e2e_s = (float(r["silicon_ttft_ms"]) + (osl - 1) * float(r["silicon_tpot_ms"])) / 1e3
    need_tflops = c / e2e_s * 2.0 * active * isl / 1e12
    have_tflops = tp * adp * _gpu_peak_tflops(db.gpu(GPUS[r["system"]]))
    if need_tflops > have_tflops:
        return (f"prompts not all computed: {need_tflops:,.0f} TFLOP/s of prompts measured, "
                f"{have_tflops:,.0f} at the datasheet peak")
    return ""


def compare(rows=None, db=None):
    """[(row, estimate or None, reason)] for every row; estimates cached per distinct request."""
    rows = rows if rows is not None else load()
    db = db or shipped_db()
    cache, out = {}, []
    for r in rows:
        req = request(r)
        key = repr(req)
        if key not in cache:
            try:
                cache[key] = (run_serve(req, db), "")
            except InputError as e:
                cache[key] = (None, f"{e.field}: {e}")
        est, why = cache[key]
        out.append((r, est, why))
    return out


def errors(results, metric: str) -> list[float]:
    """Relative errors of ``metric`` (tpot_ms, ttft_ms, or benchmark_mean_ttft_ms / benchmark_median_ttft_ms:
    the TTFT statistics of the benchmark run)."""
    col = "silicon_" + ("ttft_ms" if metric.startswith("benchmark_") else metric)

    def value(est):
        if metric.startswith("benchmark_"):
            return est["benchmark"][metric.replace("benchmark_", "")]
        return est[metric]
    return [value(est) / float(r[col]) - 1 for r, est, _ in results if est is not None]


def summary(errs) -> str:
    a = sorted(abs(e) for e in errs)
    if not a:
        return "no points"
    p90 = a[max(int(round(0.9 * len(a))) - 1, 0)]
    return (f"median |error| {statistics.median(a) * 100:.1f}%, 90th percentile {p90 * 100:.1f}%, "
            f"median signed {statistics.median(errs) * 100:+.1f}%")


def _short(model_path: str) -> str:
    return model_path.split("/")[-1]


QUEUED_TTFT_MS = 5000.0  # a TTFT this long at these prompt lengths is a queue, not a prefill


def main():
    if "--extract" in sys.argv:
        n = extract(sys.argv[sys.argv.index("--extract") + 1])
        print(f"{n} rows -> {os.path.relpath(DATA, ROOT)}")
        return
    global REQUESTS_PER_CLIENT
    if "--requests-per-client" in sys.argv:
        REQUESTS_PER_CLIENT = int(sys.argv[sys.argv.index("--requests-per-client") + 1])
    db = shipped_db()
    res = compare(db=db)
    out = {}
    repeats, models = repeated([t[0] for t in res]), {}
    for t in res:
        why = excluded(t[0], db, repeats, models) if t[1] is not None else "not estimated"
        out.setdefault(why.split(":")[0], []).append(t)
    ok = out.get("", [])
    print(f"Source: github.com/{SOURCE['repo']} {SOURCE['path']} at {SOURCE['commit'][:8]} "
          f"(read {SOURCE['read']}, {SOURCE['license']}); {len(res)} aggregated rows, {len(ok)} compared; "
          + "; ".join(f"{len(v)} {k}" for k, v in out.items() if k) + "\n")
    runs = f"{REQUESTS_PER_CLIENT} x c" if REQUESTS_PER_CLIENT else "the default, 10 x c"
    print(f"TTFT: steady state, and the mean the closed-loop benchmark reports (clients starting together; {runs} "
          "requests)\n")
    print("| engine | model | GPU | rows | TPOT median |err| | TPOT signed | TTFT steady median |err| | signed "
          "| TTFT benchmark mean median |err| | signed |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    groups = {}
    for t in ok:
        r = t[0]
        groups.setdefault((r["backend"], _short(r["model_path"]), r["system"]), []).append(t)
    for k in sorted(groups):
        g = groups[k]
        cells = []
        for metric in ("tpot_ms", "ttft_ms", "benchmark_mean_ttft_ms"):
            e = errors(g, metric)
            cells += [f"{statistics.median(map(abs, e)) * 100:.1f}%", f"{statistics.median(e) * 100:+.1f}%"]
        print(f"| {k[0]} | {k[1]} | {k[2]} | {len(g)} | " + " | ".join(cells) + " |")
    print()
    for label, sel in (("all", lambda r: True), ("vllm", lambda r: r["backend"] == "vllm"),
                       ("sglang", lambda r: r["backend"] == "sglang"), ("trtllm", lambda r: r["backend"] == "trtllm"),
                       ("dense", lambda r: _short(r["model_path"]).startswith(("Llama", "Qwen3-32B"))),
                       ("MoE", lambda r: not _short(r["model_path"]).startswith(("Llama", "Qwen3-32B")))):
        g = [t for t in ok if sel(t[0])]
        print(f"{label} ({len(g)}): TPOT {summary(errors(g, 'tpot_ms'))}; TTFT steady {summary(errors(g, 'ttft_ms'))}; "
              f"TTFT benchmark mean {summary(errors(g, 'benchmark_mean_ttft_ms'))}; "
              f"TTFT benchmark median {summary(errors(g, 'benchmark_median_ttft_ms'))}")
    queued = [(r, e) for r, e, _ in ok if float(r["silicon_ttft_ms"]) > QUEUED_TTFT_MS]
    print(f"Measured TTFT over {QUEUED_TTFT_MS / 1e3:g} s (requests queued): {len(queued)} rows, "
          f"{sum(1 for _, e in queued if e['saturated'])} of them flagged saturated by the estimate; "
          f"flagged where the measured TTFT is under 1 s: "
          f"{sum(1 for r, e, _ in ok if e['saturated'] and float(r['silicon_ttft_ms']) < 1e3)}")
    why = {}
    for r, est, reason in res:
        if est is None:
            why.setdefault(reason.split(";")[0][:120], []).append(r)
    for reason, rs in why.items():
        print(f"  not estimated ({len(rs)} rows, e.g. {_short(rs[0]['model_path'])} {rs[0]['system']} "
              f"tp {rs[0]['tp_size']}): {reason}")


if __name__ == "__main__":
    main()
