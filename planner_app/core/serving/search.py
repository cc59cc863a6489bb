"""The serving SLO search (issue 15): every deployment of a model on a list of GPUs or instances
(tensor and pipeline parallel, expert parallel for MoE, replicas, weight and KV precisions),
scored at once with core/serving/engine.py over numpy columns; the cheapest (cost per million output
tokens) and the fewest-GPU ones that meet the TTFT and TPOT targets, and the Pareto front of output
tokens/s per GPU against tokens/s per user (the chart SemiAnalysis's InferenceX draws), bounded to
deployments sized for the load. Replicas pack into whole instances (deployment.pack_replicas), and
a deployment is billed for the instances it takes (issue 29, item 5)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from planner_app.core.errors import InputError
from planner_app.core.hardware.machine import Hardware
from planner_app.core.options import command_line, given, with_options
from planner_app.core.plans.ranking import pareto_front
from planner_app.core.requests import ServeRequest, ServeSearchRequest
from planner_app.core.serving import engine as sv
from planner_app.core.serving import support
from planner_app.core.serving.deployment import (
    deployment,
    engine_settings,
    instance_price_usd,
    pack_replicas,
)
from planner_app.core.text import QT_TRANSLATE_NOOP, Text

TP_CHOICES = (1, 2, 4, 8)
PP_CHOICES = (1, 2, 4)
MAX_REPLICAS = 64
# The weight precisions the search tries: 16-bit, fp8 and int4 where the engine runs them on the GPU
# (core/serving/support.py); fp4 only where fp4 tensor cores run it (elsewhere it is int4's speed with
# more bytes per weight, never the better choice). Quantised weights change the model's answers, so
# they are tried only when the request asks (ServeSearchRequest.quantized_weights); otherwise only the
# native 16-bit weights a checkpoint ships in (bf16 or fp16: the same bytes and GEMM rate here).
NATIVE_WEIGHT_DTYPE = "bf16"
SEARCH_WEIGHT_DTYPES = (NATIVE_WEIGHT_DTYPE, "fp8", "int4")
# The Pareto front lists deployments sized for the load: one with more than this many times the
# replicas its layout needs to serve the load unsaturated is over-provisioned (64 users on 64
# replicas of 32 GPUs each is on the front of tokens/s per user, and nobody buys it). 4x keeps the
# front's fast end (a quarter of the users per replica) and drops the 2,048-GPU rows.
FRONT_OVERPROVISION_FACTOR = 4


@dataclass(frozen=True)
class Machine:
    """A machine the search deploys on: a GPU or an instance by name, resolved."""

    name: str
    kind: str  # "gpu" or "instance"
    hardware: Hardware
    gpus_per_node: int


@dataclass
class SloResult:
    evaluated: int
    fitting: int
    meeting: int
    elapsed_s: float
    cheapest: list = field(default_factory=list)
    fewest_gpus: list = field(default_factory=list)
    pareto: list = field(default_factory=list)
    closest: dict | None = None
    notes: list = field(default_factory=list)


def search_dtypes(gpu, engine: str, quantized: bool = False) -> tuple[list, list, list]:
    """(weight precisions, KV precisions) the search tries on ``gpu`` with ``engine``, and the notes
    on the ones it skips because the GPU cannot run them (core/serving/support.py). ``quantized``:
    fp8/int4 (and fp4) weights too; else the native 16-bit weights only."""
    ok_w = support.allowed(gpu, engine, support.WEIGHTS)
    ok_kv = support.allowed(gpu, engine, support.KV)
    tried = SEARCH_WEIGHT_DTYPES if quantized else (NATIVE_WEIGHT_DTYPE,)
    wds = [w for w in tried if w in ok_w]
    if quantized and "fp4" in ok_w and support.NATIVE["fp4"].runs_on(gpu):
        wds.append("fp4")
    kds = [k for k in sv.SERVE_KV_DTYPES if k in ok_kv]
    skipped = [f"{w} weights" for w in tried if w not in ok_w] + [
        f"{k} KV cache" for k in sv.SERVE_KV_DTYPES if k not in ok_kv]
    notes = [Text(QT_TRANSLATE_NOOP("Engine", "{gpu} ({arch}): deployments with {skipped} skipped ({engine} does "
                                              "not run them there)"), gpu=gpu.name, arch=gpu.arch,
                  skipped=", ".join(skipped), engine=engine)] if skipped and wds and kds else []
    if not gpu.arch:  # a user's own GPU without an architecture: nothing is skipped, and the notes say so
        notes += support.notes(gpu, engine, "/".join(wds), "/".join(kds))
    return wds, kds, notes


def _grid(model, hw, per_node: int, wds: list, kds: list):
    """Columns of every layout and precision for one machine."""
    tps = [t for t in TP_CHOICES if model.heads % t == 0 and t <= per_node]
    pps = [p for p in PP_CHOICES if p <= model.layers]
    rows = []
    for tp in tps:
        eps = [1] + ([tp] if model.is_moe and tp > 1 and model.experts % tp == 0 else [])
        for pp in pps:
            for ep in eps:
                for wi, _ in enumerate(wds):
                    for ki, _ in enumerate(kds):
                        rows.append((tp, pp, ep, wi, ki))
    base = np.array(rows, dtype=float)
    reps = np.arange(1, MAX_REPLICAS + 1, dtype=float)
    g = np.repeat(base, len(reps), axis=0)
    r = np.tile(reps, len(base))
    return {"tp": g[:, 0], "pp": g[:, 1], "ep": g[:, 2], "w": g[:, 3].astype(int), "kv": g[:, 4].astype(int),
            "replicas": r, "wds": wds, "kds": kds}


def _score_machine(req, model, shape, m: Machine, notes: list, quantized: bool = False):
    """The machine's columns, or None (with a note) when the engine runs on none of its precisions."""
    kind, name, hw, per_node = m.kind, m.name, m.hardware, m.gpus_per_node
    wds, kds, skipped = search_dtypes(hw.gpu, req.engine, quantized)
    if not wds or not kds:
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "{machine}: skipped, {engine} does not run on {gpu} ({arch})"),
                          machine=name, engine=req.engine, gpu=hw.gpu.name, arch=hw.gpu.arch))
        return None
    notes += [n for n in skipped if n not in notes]
    g = _grid(model, hw, per_node, wds, kds)
    wb = np.array([sv.SERVE_WEIGHT_BYTES[w] for w in g["wds"]])[g["w"]]
    kb = np.array([sv.SERVE_KV_BYTES[k] for k in g["kds"]])[g["kv"]]
    bits = np.array([support.gemm_bits(hw.gpu, w, sv.GEMM_BITS[w]) for w in g["wds"]])[g["w"]]
    d = deployment(req, hw.gpu, tp=g["tp"], pp=g["pp"], ep=g["ep"], adp=1, replicas=g["replicas"], wdtype=wb,
                   kvdtype=kb)
    dev = sv.device_for(hw, bits, per_node)
    cap = sv.capacity(shape, d, dev.capacity_bytes, req.isl, req.osl)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        st = sv.steady_state(shape, dev, d, cap, req.isl, req.osl, concurrency=req.concurrency,
                             request_rate=req.request_rate)
    gpus = g["tp"] * g["pp"] * g["replicas"]
    out_tps = st.requests_per_s * req.osl
    price, basis = instance_price_usd(hw, req.price, req.cny_per_usd)
    inst = hw.instance
    if inst is not None:
        insts, idle = pack_replicas(g["tp"] * g["pp"], g["replicas"], inst.gpu_count)
    else:
        insts, idle = np.full(len(gpus), np.nan), np.full(len(gpus), np.nan)
    # a price comes with an instance (instance_price_usd)
    usd_h = insts * price if price is not None else np.full(len(gpus), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        usd_per_m = np.where(out_tps > 0, usd_h / (out_tps * 3600) * 1e6, np.nan)
    fits = np.asarray(cap["fits"]) & np.isfinite(st.tpot_s)
    ok = fits & ~np.asarray(st.saturated, dtype=bool)  # runs the load without queueing
    seqs, tokens = engine_settings(req, hw.gpu)
    return {"machine": np.full(len(gpus), name, dtype=object), "kind": kind, "gpu": hw.gpu.name,
            "tp": g["tp"], "pp": g["pp"], "ep": g["ep"], "replicas": g["replicas"], "gpus": gpus,
            "weights_dtype": np.array(g["wds"], dtype=object)[g["w"]],
            "kv_dtype": np.array(g["kds"], dtype=object)[g["kv"]],
            "fits": fits, "ok": ok, "ttft_s": st.ttft_s, "tpot_s": st.tpot_s,
            "e2e_s": st.e2e_s, "out_tps": out_tps, "rps": st.requests_per_s, "saturated": st.saturated,
            "max_conc": cap["max_concurrency"], "usd_h": usd_h, "usd_per_m": usd_per_m, "instances": insts,
            "idle_gpus": idle, "gpus_per_instance": np.full(len(gpus), inst.gpu_count if inst else np.nan),
            "price_basis": np.full(len(gpus), basis, dtype=object),
            "replicas_needed": _replicas_needed(ok, g["replicas"]),
            "kv_tokens": cap["kv_cache_tokens"], "max_num_seqs": seqs, "max_num_batched_tokens": tokens}


def _replicas_needed(ok, replicas):
    """Per row, the fewest replicas of its layout (tp, pp, ep and precisions on one machine) that
    serve the load unsaturated; inf where none does. ``_grid`` lists each layout's replicas 1 ..
    MAX_REPLICAS in one run, so a layout is a row of the reshaped column."""
    r = np.where(ok, replicas, np.inf).reshape(-1, MAX_REPLICAS)
    return np.repeat(r.min(axis=1), MAX_REPLICAS)


def _concat(parts: list) -> dict:
    keys = [k for k, v in parts[0].items() if isinstance(v, np.ndarray)]
    out = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    out["kind"] = np.concatenate([np.full(len(p["tp"]), p["kind"], dtype=object) for p in parts])
    out["gpu"] = np.concatenate([np.full(len(p["tp"]), p["gpu"], dtype=object) for p in parts])
    return out


def _number(v) -> float | None:
    v = float(v)
    return v if np.isfinite(v) else None


def _plan(c: dict, i: int, req: ServeRequest) -> dict:
    ms = 1e3
    out_tps = float(c["out_tps"][i])
    gpus = int(c["gpus"][i])
    ttft = float(c["ttft_s"][i])
    machine = {"gpu": None, "instance": None, c["kind"][i]: c["machine"][i]}
    row = with_options(req, **machine, tp=int(c["tp"][i]),
                       pp=int(c["pp"][i]), ep=int(c["ep"][i]), replicas=int(c["replicas"][i]),
                       weights_dtype=c["weights_dtype"][i], kv_dtype=c["kv_dtype"][i])
    cmd = command_line("serve", {"model": req.model if isinstance(req.model, str) else "config.json",
                                 **given(row)})
    instances = _number(c["instances"][i])
    return {"machine": c["machine"][i], "gpu": c["gpu"][i], "tp": int(c["tp"][i]), "pp": int(c["pp"][i]),
            "ep": int(c["ep"][i]), "replicas": int(c["replicas"][i]), "gpus": gpus,
            # what is billed: whole instances (pack_replicas); None on a bare GPU
            "instances": None if instances is None else int(instances),
            "idle_gpus": None if instances is None else int(c["idle_gpus"][i]),
            "gpus_per_instance": None if instances is None else int(c["gpus_per_instance"][i]),
            "weights_dtype": c["weights_dtype"][i], "kv_dtype": c["kv_dtype"][i],
            "ttft_ms": ttft * ms if np.isfinite(ttft) else None, "tpot_ms": float(c["tpot_s"][i]) * ms,
            "e2e_latency_ms": float(c["e2e_s"][i]) * ms if np.isfinite(c["e2e_s"][i]) else None,
            "output_tokens_per_s": out_tps, "output_tokens_per_s_per_gpu": out_tps / gpus,
            "tokens_per_s_per_user": 1.0 / float(c["tpot_s"][i]), "requests_per_s": float(c["rps"][i]),
            "max_concurrency": int(c["max_conc"][i] if np.isfinite(c["max_conc"][i]) else 0),
            "saturated": bool(c["saturated"][i]),
            "usd_per_hour": _number(c["usd_h"][i]), "usd_per_million_output_tokens": _number(c["usd_per_m"][i]),
            "price_basis": c["price_basis"][i] if _number(c["usd_h"][i]) is not None else None,
            "serve_command": cmd}


def slo_search(request: ServeSearchRequest, model, machines: list[Machine]) -> SloResult:
    """Score every deployment on ``machines`` and rank those that meet the request's TTFT and TPOT
    targets without queueing (the request's own layout and precisions are the search's to set)."""
    req = request_for_search(request.serve)
    ttft_ms, tpot_ms, top = request.targets.ttft_ms, request.targets.tpot_ms, request.top
    t0 = time.perf_counter()
    if not model.is_transformer:
        raise InputError("model", "serving needs a transformer language model")
    shape = sv.model_shape(model)
    notes: list[str] = []
    parts = [p for p in (_score_machine(req, model, shape, m, notes, request.quantized_weights) for m in machines)
             if p]
    if not parts:
        raise InputError("engine", f"{req.engine} runs on none of the machines given ({'; '.join(notes)}); "
                                   f"choose another --engine or other machines")
    c = _concat(parts)
    n = len(c["tp"])
    fits = c["fits"]
    ok = c["ok"]
    meets = ok & (c["ttft_s"] * 1e3 <= ttft_ms) & (c["tpot_s"] * 1e3 <= tpot_ms)
    idx = np.flatnonzero(meets)
    cheapest, fewest = rankings(c, idx, req.price)
    cheapest, fewest = cheapest[:top], fewest[:top]
    # the front among deployments sized for the load (FRONT_OVERPROVISION_FACTOR); what it leaves out is said
    sized = ok & (c["replicas"] <= FRONT_OVERPROVISION_FACTOR * c["replicas_needed"])
    front = _front(c, np.flatnonzero(sized))
    dropped = np.setdiff1d(_front(c, np.flatnonzero(ok)), front)
    if len(dropped):
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "Pareto front: {n:,} points with more than {factor}x the "
                                                      "replicas their layout needs for this load (up to {gpus:,} "
                                                      "GPUs) left out"),
                          n=len(dropped), factor=FRONT_OVERPROVISION_FACTOR, gpus=int(c["gpus"][dropped].max())))
    res = SloResult(evaluated=n, fitting=int(fits.sum()), meeting=int(meets.sum()), elapsed_s=0.0,
                    cheapest=[_plan(c, int(i), req) for i in cheapest],
                    fewest_gpus=[_plan(c, int(i), req) for i in fewest],
                    pareto=[_plan(c, int(i), req) for i in front], notes=notes)
    if not len(idx):
        cand = np.flatnonzero(fits)
        if len(cand):
            with np.errstate(invalid="ignore"):
                miss = np.maximum(c["ttft_s"][cand] * 1e3 / ttft_ms, c["tpot_s"][cand] * 1e3 / tpot_ms)
            miss = np.where(np.isfinite(miss), miss, np.inf)
            res.closest = _plan(c, int(cand[np.lexsort((c["gpus"][cand], miss))[0]]), req)
    res.elapsed_s = time.perf_counter() - t0
    return res


def rankings(c: dict, idx, price: str | None) -> tuple:
    """Rows ``idx`` of the columns ``c`` in the two orders the search lists: cheapest (cost per
    million output tokens, then fewer GPUs) and fewest GPUs (then cost per million). Costs compare
    like for like: a row priced at another basis than the one ranked at (``price``, else on-demand;
    an instance sold only as spot is priced at spot) comes after every row at that basis, and an
    unpriced row (a bare GPU) last."""
    basis = price or "on_demand"
    per_m = np.where(np.isfinite(c["usd_per_m"][idx]), c["usd_per_m"][idx], np.inf)
    other = np.array([b != basis for b in c["price_basis"][idx]], dtype=bool) & np.isfinite(per_m)
    gpus = c["gpus"][idx]
    return idx[np.lexsort((gpus, per_m, other))], idx[np.lexsort((per_m, other, gpus))]


def _front(c: dict, rows):
    """Rows on the front of tokens/s per user against output tokens/s per GPU (both maximised),
    slowest user first."""
    if not len(rows):
        return rows
    per_gpu = c["out_tps"][rows] / c["gpus"][rows]
    per_user = 1.0 / c["tpot_s"][rows]
    front = rows[pareto_front(-per_user, -per_gpu)]
    return front[np.argsort(1.0 / c["tpot_s"][front])]


def request_for_search(req: ServeRequest) -> ServeRequest:
    """The search sets the layout itself: the request's tp/pp/ep/replicas/dtypes are ignored."""
    return replace(req, tp=1, pp=1, ep=1, attention_dp=1, replicas=1)
