"""One continuous-batching deployment at steady state, from a typed ``ServeRequest``: the checks of
its traffic and layout, the engine settings the engine takes by default, the KV pool, the steady
state and the benchmark's TTFT, the cost per million output tokens (the one pricing rule,
core/plans/cost.py), as a ``ServeEstimate`` with one serializer. The service resolves the names
(service/serving.py); the SLO search scores many deployments at once (core/serving/search.py)."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from planner_app.core.errors import InputError
from planner_app.core.hardware.machine import Hardware
from planner_app.core.plans.cost import DEFAULT_MIX, PriceChoice
from planner_app.core.requests import ServeRequest
from planner_app.core.results import json_ready
from planner_app.core.serving import benchmark as sb
from planner_app.core.serving import engine as sv
from planner_app.core.serving import support as serving_support
from planner_app.core.text import QT_TRANSLATE_NOOP, Text


def check_whole(field: str, v) -> None:
    """``v`` must be a whole number of at least 1 (the CLI's parser stops the rest first; the GUI, plan files
    and scripts reach the service directly)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
        raise InputError(field, f"must be a whole number of at least 1; got {v!r}")


def check_traffic(req) -> None:
    check_whole("isl", req.isl)
    check_whole("osl", req.osl)
    if (req.concurrency is None) == (req.request_rate is None):
        raise InputError("concurrency", "give exactly one of concurrency or request_rate")
    if req.concurrency is not None:
        check_whole("concurrency", req.concurrency)
    if req.request_rate is not None and not req.request_rate > 0:
        raise InputError("request_rate", f"must be a positive number of requests per second; got {req.request_rate!r}")
    if req.benchmark_requests is not None:
        if req.concurrency is None:
            raise InputError("benchmark_requests", "a closed-loop benchmark needs a concurrency (its clients), "
                                                   "not a request rate")
        check_whole("benchmark_requests", req.benchmark_requests)
    check_whole("replicas", req.replicas)


def benchmark_run_requests(req) -> int:
    """Requests of the closed-loop benchmark run ``req`` describes (it has a concurrency)."""
    return req.benchmark_requests or sb.BENCHMARK_REQUESTS_PER_CLIENT * req.concurrency


def check_layout(model, tp: int, pp: int, ep: int, adp: int) -> None:
    """Errors naming the field: tp must divide the heads, pp the layers; ep needs a MoE model and
    must divide its experts and tp x attention-dp."""
    if not model.is_transformer:
        raise InputError("model", "serving needs a transformer language model")
    for name, v in (("tp", tp), ("pp", pp), ("ep", ep), ("attention_dp", adp)):
        check_whole(name, v)
    if model.heads % tp:
        raise InputError("tp", f"must divide the number of attention heads ({model.heads}); got {tp}")
    if pp > model.layers:
        raise InputError("pp", f"must be at most the number of layers ({model.layers}); got {pp}")
    if ep > 1 and not model.is_moe:
        raise InputError("ep", f"expert parallel needs a mixture-of-experts model; {model.name} is dense (use ep 1)")
    if ep > 1 and (model.experts % ep or (tp * adp) % ep):
        raise InputError("ep", f"must divide the experts ({model.experts}) and tp x attention-dp ({tp * adp}); "
                               f"got {ep}")


def instance_price_usd(hw: Hardware, basis: str | None, cny_per_usd) -> tuple[float | None, str | None]:
    """(USD per instance-hour, its basis) by the one pricing rule (core/plans/cost.py); (None, None)
    on a bare GPU."""
    if hw.instance is None:
        return None, None
    return PriceChoice(basis=basis, mix=DEFAULT_MIX, cny_per_usd=cny_per_usd).hourly(hw.instance.prices)


def pack_replicas(gpus_per_replica, replicas, gpus_per_instance):
    """(instances billed, idle GPUs) of ``replicas`` replicas of ``gpus_per_replica`` GPUs on
    instances of ``gpus_per_instance``: replicas pack into whole instances and a replica that fits
    in one is never split across two (its GPUs talk over the node's own link, as the engine model
    assumes), so an instance holds floor(gpus_per_instance / gpus_per_replica) replicas; a replica
    larger than one instance takes whole instances of its own, ceil(gpus_per_replica /
    gpus_per_instance). A cloud bills the instance, not its GPUs: idle GPUs are paid for.
    Array-generic: numbers (ints back) or numpy columns."""
    gpr = np.asarray(gpus_per_replica, dtype=float)
    reps = np.asarray(replicas, dtype=float)
    per_inst = float(gpus_per_instance)
    with np.errstate(divide="ignore", invalid="ignore"):
        fits_one = gpr <= per_inst
        per_instance = np.floor(per_inst / np.where(fits_one, gpr, 1.0))
        instances = np.where(fits_one, np.ceil(reps / np.maximum(per_instance, 1.0)),
                             reps * np.ceil(gpr / per_inst))
    idle = instances * per_inst - gpr * reps
    if np.ndim(instances) == 0:
        return int(instances), int(idle)
    return instances, idle


def engine_settings(req, gpu) -> tuple[int, int]:
    seqs, tokens = sv.engine_defaults(gpu.capacity_bytes, gpu.id + " " + gpu.name)
    return req.max_num_seqs or seqs, req.max_num_batched_tokens or tokens


def deployment(req, gpu, tp=None, pp=None, ep=None, adp=None, replicas=None, wdtype=None, kvdtype=None):
    seqs, tokens = engine_settings(req, gpu)
    wd = wdtype if wdtype is not None else req.weights_dtype
    kd = kvdtype if kvdtype is not None else req.kv_dtype
    return sv.Deployment(tp=req.tp if tp is None else tp, pp=req.pp if pp is None else pp,
                         ep=req.ep if ep is None else ep, attention_dp=req.attention_dp if adp is None else adp,
                         replicas=req.replicas if replicas is None else replicas,
                         weight_bytes=sv.SERVE_WEIGHT_BYTES[wd] if isinstance(wd, str) else wd,
                         kv_bytes=sv.SERVE_KV_BYTES[kd] if isinstance(kd, str) else kd,
                         gmu=req.gpu_memory_utilization, max_num_seqs=seqs, max_batched_tokens=tokens,
                         **sv.engine_fields(req.engine))


def serve_estimate(req: ServeRequest, model, hw: Hardware, per_node: int, notes: list) -> ServeEstimate:
    """The steady-state estimate of one resolved deployment (``notes``: what resolving it assumed)."""
    check_traffic(req)
    check_layout(model, req.tp, req.pp, req.ep, req.attention_dp)
    support_notes = serving_support.check(hw.gpu, req.engine, req.weights_dtype, req.kv_dtype)
    shape = sv.model_shape(model)
    d = deployment(req, hw.gpu)
    dev = sv.device_for(hw, serving_support.gemm_bits(hw.gpu, req.weights_dtype, sv.GEMM_BITS[req.weights_dtype]),
                        per_node)
    cap = sv.capacity(shape, d, dev.capacity_bytes, req.isl, req.osl)
    mem = cap["memory"]
    gb = 1e9
    fixed = float(mem["weights"] + mem["activation_workspace"] + mem["other"] + mem["cuda_graphs"])
    if not float(mem["kv_pool"]) > 0:
        # what the engine may fill: its fraction of the GPU, or (TensorRT-LLM, whose fraction is of the memory
        # the model leaves free) the whole GPU
        room = float(dev.capacity_bytes) * (1.0 if d.kv_fraction_of_free else req.gpu_memory_utilization)
        raise InputError("tp", f"weights need {float(mem['weights']) / gb:.1f} GB per GPU (plus "
                               f"{(fixed - float(mem['weights'])) / gb:.1f} GB workspace, CUDA graphs and context), "
                               f"the GPU has {room / gb:.1f} GB for them"
                               + ("" if d.kv_fraction_of_free else
                                  f" at gpu_memory_utilization {req.gpu_memory_utilization:g}")
                               + ": raise tp or pp, or use a smaller weights_dtype")
    if not bool(cap["fits"]):
        raise InputError("isl", f"one request of {req.isl + req.osl:,} tokens needs more KV cache than the pool holds "
                                f"({int(cap['kv_cache_tokens']):,} tokens per replica): raise tp or shorten it")
    st = sv.steady_state(shape, dev, d, cap, req.isl, req.osl, concurrency=req.concurrency,
                         request_rate=req.request_rate)
    bench = None
    if req.concurrency is not None:
        n_req = benchmark_run_requests(req)
        mean, median, burst = sb.benchmark_ttft_s(shape, dev, d, st, req.concurrency, n_req, req.isl)
        bench = {"requests": int(n_req), "clients": int(req.concurrency),
                 "mean_ttft_ms": float(mean) * 1e3 if math.isfinite(float(mean)) else None,
                 "median_ttft_ms": float(median) * 1e3 if math.isfinite(float(median)) else None,
                 "opening_burst_ttft_ms": float(burst) * 1e3}
    rate = float(st.requests_per_s)
    out_tps = rate * req.osl
    price, basis = instance_price_usd(hw, req.price, req.cny_per_usd)
    cost = {}
    inst = hw.instance
    if price is not None and inst is not None:  # a price comes with an instance (instance_price_usd)
        instances, idle = pack_replicas(d.gpus_per_replica, d.replicas, inst.gpu_count)
        usd_h = price * instances
        cost = {"usd_per_hour": usd_h, "instances": instances, "gpus_per_instance": inst.gpu_count,
                "idle_gpus": idle, "price_basis": basis,
                "usd_per_million_output_tokens": usd_h / (out_tps * 3600) * 1e6 if out_tps > 0 else None,
                "price_date": inst.prices.date, "currency_source": inst.prices.currency}
    seqs, tokens = engine_settings(req, hw.gpu)
    notes += serve_assumptions(req, seqs, tokens) + support_notes
    if bool(st.saturated):
        by_pool = float(cap["max_concurrency_kv"])
        notes.append(Text(QT_TRANSLATE_NOOP("Engine", "saturated: {what} holds {n:,.0f} running requests; the rest "
                                                      "queue ({how})"),
                          what="the KV pool" if by_pool < seqs * req.attention_dp else "max_num_seqs",
                          n=float(cap["max_concurrency"]) * req.replicas,
                          how="the request rate exceeds the throughput: the queue grows without bound"
                          if req.request_rate else "Little's law: wait = queue / completion rate"))
    return ServeEstimate(request=req, model_name=model.name, hardware=hw, deployment=d, capacity=cap, state=st,
                         benchmark=bench, cost=cost, max_num_seqs=seqs, max_num_batched_tokens=tokens,
                         capacity_bytes=float(dev.capacity_bytes), assumptions=tuple(notes))


@dataclass(frozen=True)
class ServeEstimate:
    """A serving deployment's steady state and the request it answers (``gpu-planner serve``)."""

    request: ServeRequest
    model_name: str
    hardware: Hardware
    deployment: sv.Deployment
    capacity: dict
    state: sv.ServeState
    benchmark: dict | None
    cost: dict
    max_num_seqs: int
    max_num_batched_tokens: int
    capacity_bytes: float  # what the device holds (the calibration's, else the GPU's)
    assumptions: tuple

    def to_json(self) -> dict:
        """The JSON ``gpu-planner serve --json`` prints (PRODUCT.md's contract)."""
        req, hw, d, cap, st, bench, cost = (self.request, self.hardware, self.deployment, self.capacity, self.state,
                                            self.benchmark, self.cost)
        model, notes = self.model_name, list(self.assumptions)
        seqs, tokens = self.max_num_seqs, self.max_num_batched_tokens
        mem = cap["memory"]
        dev_capacity = self.capacity_bytes
        gpus = d.gpus_per_replica * d.replicas
        rate = float(st.requests_per_s)
        out_tps = rate * req.osl
        ms = 1e3
        infinite = not math.isfinite(float(st.queue_s))
        breakdown = {k: float(mem[k]) for k in ("weights", "kv_pool", "activation_workspace", "cuda_graphs", "other")}
        return json_ready({
            "model": model, "gpu": hw.gpu.name,
            **({"instance": hw.instance.instance_id} if hw.instance is not None else {}),
            "engine": req.engine,
            "deployment": {"tp": req.tp, "pp": req.pp, "ep": req.ep, "attention_dp": req.attention_dp,
                           "replicas": req.replicas, "gpus_per_replica": int(d.gpus_per_replica), "gpus": int(gpus),
                           "weights_dtype": req.weights_dtype, "kv_dtype": req.kv_dtype,
                           "gpu_memory_utilization": req.gpu_memory_utilization, "max_num_seqs": seqs,
                           "max_num_batched_tokens": tokens, "block_size": sv.BLOCK_SIZE_TOKENS},
            "traffic": {"isl": req.isl, "osl": req.osl, "concurrency": req.concurrency,
                        "request_rate": req.request_rate},
            "ttft_ms": None if infinite else float(st.ttft_s) * ms,
            "tpot_ms": float(st.tpot_s) * ms,
            # what a closed-loop benchmark at this concurrency reports (its clients start together); None under a
            # request rate
            "benchmark": bench,
            # where an average engine step's time goes (decode steps and those carrying prefill chunks,
            # weighted by their share); the parts sum to tpot_ms
            "step_breakdown_ms": {k: float(v) * ms for k, v in st.step_parts.items()},
            "e2e_latency_ms": None if infinite else float(st.e2e_s) * ms,
            "queueing_delay_ms": None if infinite else float(st.queue_s) * ms,
            "output_tokens_per_s": out_tps,
            "output_tokens_per_s_per_gpu": out_tps / gpus,
            "tokens_per_s_per_user": 1.0 / float(st.tpot_s),
            "requests_per_s": rate,
            "running_requests": float(st.running) * req.replicas,
            "decoding_requests": float(st.decodes) * req.replicas,
            "fits": bool(cap["fits"]),
            "kv_cache_tokens": int(cap["kv_cache_tokens"]),  # one replica's pool (all its attention-DP ranks)
            "kv_cache_blocks": int(cap["kv_blocks"]),
            "kv_bytes_per_token": float(cap["kv_bytes_per_token"]),
            "max_concurrency": int(cap["max_concurrency"]) * req.replicas,
            "saturated": bool(st.saturated),
            "memory": {"breakdown": breakdown, "device_bytes": sum(breakdown.values()),
                       "capacity_bytes": dev_capacity,
                       "free_bytes": dev_capacity - sum(breakdown.values())},
            "cost": cost,
            "assumptions": notes,
        })


def serve_assumptions(req, seqs: int, tokens: int) -> list:
    e = sv.ENGINES[req.engine]
    return [
        Text(QT_TRANSLATE_NOOP("Engine", "{engine} at steady state: continuous batching, chunked prefill of at most "
                                         "{tokens} tokens per step, at most {seqs} running requests, KV pages of "
                                         "{block} tokens, gpu_memory_utilization {gmu:g}"),
             engine=req.engine, tokens=tokens, seqs=seqs, block=sv.BLOCK_SIZE_TOKENS, gmu=req.gpu_memory_utilization),
        Text(QT_TRANSLATE_NOOP("Engine", "per-step engine overhead {ms:.2f} ms ({source})"),
             ms=e.step_overhead_s * 1e3, source=e.source),
        *([Text(QT_TRANSLATE_NOOP("Engine", "the KV cache takes {gmu:g} of the memory the weights, workspace, CUDA "
                                            "graphs and context leave free (TensorRT-LLM free_gpu_memory_fraction), "
                                            "not of the whole GPU"), gmu=req.gpu_memory_utilization)]
          if e.kv_fraction_of_free else []),
        Text(QT_TRANSLATE_NOOP("Engine", "host time {us:.1f} us per running request per step, beside the GPU step "
                                         "(overlap scheduler; TensorRT-LLM PR #10273, measured on a Grace host): "
                                         "a step takes the longer of the two"), us=e.host_s_per_request * 1e6)
        if e.host_s_per_request else
        Text(QT_TRANSLATE_NOOP("Engine", "the engine's CPU time per running request is not modelled (no measurement "
                                         "found for {engine}); at thousands of running requests a small model can be "
                                         "host-bound"), engine=req.engine),
        Text(QT_TRANSLATE_NOOP("Engine", "a running request holds the KV pages of its prompt and on average "
                                         "{held:.0f}% of its output's (pages taken as tokens are generated, or the "
                                         "whole output reserved at admission); no prefix caching; CUDA graphs "
                                         "{graph:.2f} GiB per GPU"),
             held=e.kv_output_held * 100, graph=sv.CUDA_GRAPH_BYTES / 2**30),
        Text(QT_TRANSLATE_NOOP("Engine", "tokens/s per user is 1 / TPOT; requests/s from Little's law "
                                         "(running requests / end-to-end latency)")),
        # TTFT at steady state; docs/validation.md ("Real serving measurements we did not make") compares both
        Text(QT_TRANSLATE_NOOP("Engine", "TTFT at steady state: the prompt's prefill chunks and its wait behind "
                                         "other prompts' prefill, arrivals taken as independent")),
    ] + ([Text(QT_TRANSLATE_NOOP("Engine", "benchmark TTFT: the mean a closed-loop benchmark of {n:,} requests "
                                           "reports (aiperf --concurrency, vllm bench serve --max-concurrency): its "
                                           "{c:,} clients start together on an idle server, so the first round's "
                                           "prompts queue behind each other's prefill; its median stays the steady "
                                           "state's while under half the requests are in that round"),
               n=benchmark_run_requests(req), c=req.concurrency)]
         if req.concurrency is not None else [])

