"""Per-rank training memory and compute time of every parallel layout at cluster scale, measured on one
GPU with torch's fake process group (issue 30).

One process is rank R of a W-rank job: ``dist.init_process_group("fake", rank=R, world_size=W,
store=FakeStore())``; collectives are no-ops and every allocation is real (ECOSYSTEM.md), so rank R's
``torch.cuda.max_memory_allocated`` is that rank's peak, and its step time is its compute without
communication (FSDP2's copy-in/copy-out around the collectives is real work and is in it). A Hugging
Face model (tests/data/hf_configs/, random weights) is built on the meta device, wrapped, moved to the
GPU with ``to_empty`` and trained on random tokens: ``loss = model(input_ids=x, labels=x).loss``,
``loss.backward()``, ``opt.step()``, ``opt.zero_grad(set_to_none=True)``; sdpa attention; AdamW,
fused on CUDA (one parameter group per tensor kind: a fused step cannot mix DTensors and tensors).

Layouts (``kind``), wrapped as their users wrap them:
- ``fsdp2``: ``fully_shard`` on every decoder layer, then the root (torchtitan's and accelerate's
  way); a 1-D mesh (full sharding) or a 2-D ``(replicate, shard)`` mesh (hybrid sharding);
  ``reshard_after_forward`` True/False; ``precision``: ``bf16`` (bf16 weights), ``mp``
  (fp32 weights, ``MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)``) or ``autocast``
  (fp32 weights, the forward under ``torch.autocast(bf16)``); ``CPUOffloadPolicy``; recomputation by
  Hugging Face's ``gradient_checkpointing_enable(use_reentrant=False)`` (what Trainer's
  ``gradient_checkpointing=True`` calls).
- ``ddp``: ``DistributedDataParallel`` with its defaults (bucket_cap_mb=25,
  gradient_as_bucket_view=False). The fake group's all-reduce work returns no tensor, which DDP's
  reducer asserts on (torch/csrc/distributed/c10d/comm.cpp); a comm hook that returns the bucket's
  own buffer in a completed future (what the default all-reduce hook returns, in place) replaces it.
- ``tp``: ``parallelize_module`` with torchtitan's Llama plan (gpu_multi_runs.tp_plans), vocabulary-
  sharded logits and ``loss_parallel()``; ``sequence_parallel`` adds SequenceParallel norms.
- ``tp_fsdp2``: the same plan on the ``tp`` dimension of a 2-D ``(dp, tp)`` mesh, then ``fully_shard``
  on ``dp`` (torchtitan's 2-D parallelism).

Not runnable under the fake group (``UNRUNNABLE``, recorded with the reason): pipeline parallelism
through ``torch.distributed.pipelining`` exchanges each stage's tensor metadata as pickled objects
(``send_object_list``/``recv_object_list``) before the first step, and a fake receive returns no
bytes, so the receiver allocates a buffer of a garbage size.

    python -m benchmarks.gpu.fake_pg_runs --suite h200 --out tests/data/fake_pg_runs_h200.json
    python -m benchmarks.gpu.fake_pg_runs --cases fsdp2-8b-w64,ddp-1b-w8 --out r.json
    python -m benchmarks.gpu.fake_pg_runs --suite smoke --device cpu --out r.json  # CI: 2-layer model, CPU
    FAKE_PG_SNAPSHOT=1 python -m benchmarks.gpu.fake_pg_runs --cases tp8-sp-8b --steps 4 --out r.json
        # also "peak_live": the blocks alive at the last step's peak, by allocation site
    FAKE_PG_PROFILE=1 python -m benchmarks.gpu.fake_pg_runs --cases fsdp2-8b-w64 --out r.json
        # also "profile": one more step under torch.profiler (GPU time by kernel, host and wall time)
    FAKE_PG_NO_FILL=1 python -m benchmarks.gpu.fake_pg_runs --suite h200 --out r.json
        # FSDP's collectives skip the fake backend's output fill (NO_FILL below): compute time alone
        # on a GPU every case also records dispatch_us_per_op: the probe's host-speed test, run just before it

Each group of cases with the same world size and measured rank runs in its own process (the fake
group's size is fixed per process); the parent merges the records, writing the file after each group
(all-or-nothing, bench_io.write_json), so a run cut short keeps what finished. Per case: the peak
(the largest ``max_memory_allocated`` of the steps, each step's counted from its own start; the forward's
own peak beside it), what was
allocated before the model was built (``base_bytes``: cuBLAS workspaces after the first case), the
step times (CUDA events; the first step is a warm-up) and the local parameter and optimizer-state
elements.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

from benchmarks.gpu.bench_io import command_line, kernel_times, write_json
from benchmarks.gpu.gpu_multi_runs import build_model, hf_config_dict, make_adamw, tp_plans

UNRUNNABLE = [
    {"layout": "pipeline parallel (torch.distributed.pipelining, 1F1B and interleaved)",
     "reason": "PipelineStage exchanges tensor metadata with send_object_list/recv_object_list before the first "
               "step; the fake group's receive delivers no bytes, so recv_object_list allocates a buffer of a "
               "garbage size (seen: 9.4e13 bytes, torch 2.13 CPU) and the run fails; static input/output/grad "
               "arguments do not skip the exchange in torch 2.13 (its warm-up vote and backward metadata still "
               "travel as objects)"},
]


def _case(name, kind, config, world, micro_batch=1, seq_len=2048, rank=0, **kw):
    return dict(name=name, kind=kind, config=config, world=world, rank=rank, micro_batch=micro_batch,
                seq_len=seq_len, **kw)


M1, M3, M8, M70, Q7 = "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b"


def _h200_suite() -> list:
    out = []
    # FSDP2 full sharding, bf16 weights: the world-size sweep on three sizes
    for w in (2, 8, 64, 256, 1024):
        out.append(_case(f"fsdp2-8b-w{w}", "fsdp2", M8, w))
    for w in (8, 64, 1024):
        out.append(_case(f"fsdp2-1b-w{w}-b4", "fsdp2", M1, w, micro_batch=4))
        out.append(_case(f"fsdp2-3b-w{w}-b2", "fsdp2", M3, w, micro_batch=2))
    for w in (16, 64, 256, 1024):
        out.append(_case(f"fsdp2-70b-w{w}-ckpt", "fsdp2", M70, w, ckpt=True))
    out.append(_case("fsdp2-70b-w64", "fsdp2", M70, 64))
    out.append(_case("fsdp2-qwen7b-w32", "fsdp2", Q7, 32))
    # batch and sequence sizes
    for b, s in ((2, 4096), (1, 8192), (8, 1024)):
        out.append(_case(f"fsdp2-8b-w64-b{b}-s{s}", "fsdp2", M8, 64, micro_batch=b, seq_len=s))
    out.append(_case("fsdp2-8b-w64-b4-s8192-ckpt", "fsdp2", M8, 64, micro_batch=4, seq_len=8192, ckpt=True))
    # reshard_after_forward=False
    for m, w, b in ((M8, 8, 1), (M8, 64, 1), (M1, 64, 4), (M3, 256, 2)):
        out.append(_case(f"fsdp2-{m.split('-')[-1]}-w{w}-noreshard", "fsdp2", m, w, micro_batch=b, reshard=False))
    # recomputation
    for m, w, b in ((M8, 8, 2), (M8, 256, 4), (M1, 64, 8), (M3, 1024, 4)):
        out.append(_case(f"fsdp2-{m.split('-')[-1]}-w{w}-b{b}-ckpt", "fsdp2", m, w, micro_batch=b, ckpt=True))
    # fp32 shards: MixedPrecisionPolicy and autocast
    for m, w, b in ((M8, 8, 1), (M8, 64, 1), (M1, 64, 4), (M3, 256, 2)):
        tag = m.split('-')[-1]
        out.append(_case(f"fsdp2-{tag}-w{w}-mp", "fsdp2", m, w, micro_batch=b, precision="mp"))
        out.append(_case(f"fsdp2-{tag}-w{w}-autocast", "fsdp2", m, w, micro_batch=b, precision="autocast"))
    out.append(_case("fsdp2-8b-w64-mp-ckpt", "fsdp2", M8, 64, precision="mp", ckpt=True))
    # CPU offload
    for m, w, b in ((M8, 8, 1), (M8, 64, 1), (M1, 16, 4)):
        out.append(_case(f"fsdp2-{m.split('-')[-1]}-w{w}-offload", "fsdp2", m, w, micro_batch=b, offload=True))
    # hybrid sharding (replicate x shard)
    for w, s in ((64, 8), (256, 8), (1024, 8), (1024, 64)):
        out.append(_case(f"hsdp-8b-w{w}-s{s}", "fsdp2", M8, w, shard=s))
    out.append(_case("hsdp-70b-w1024-s64-ckpt", "fsdp2", M70, 1024, shard=64, ckpt=True))
    out.append(_case("hsdp-1b-w256-s16-b4", "fsdp2", M1, 256, micro_batch=4, shard=16))
    # DDP
    for m, w, b in ((M1, 2, 4), (M1, 8, 8), (M1, 64, 2), (M3, 8, 1)):
        out.append(_case(f"ddp-{m.split('-')[-1]}-w{w}-b{b}", "ddp", m, w, micro_batch=b))
    # tensor and sequence parallel
    for t in (2, 4, 8):
        out.append(_case(f"tp{t}-8b", "tp", M8, t, micro_batch=2))
        out.append(_case(f"tp{t}-sp-8b", "tp", M8, t, micro_batch=2, sequence_parallel=True))
    out.append(_case("tp8-sp-70b-ckpt", "tp", M70, 8, ckpt=True, sequence_parallel=True))
    # TP x FSDP2
    for w, t, sp in ((16, 2, False), (64, 8, True), (256, 4, True), (1024, 8, True)):
        out.append(_case(f"tp{t}-fsdp2-8b-w{w}{'-sp' if sp else ''}", "tp_fsdp2", M8, w, micro_batch=2, tp=t,
                         sequence_parallel=sp))
    for w in (64, 512):
        out.append(_case(f"tp8-sp-fsdp2-70b-w{w}-ckpt", "tp_fsdp2", M70, w, tp=8, sequence_parallel=True, ckpt=True))
    return out


SMOKE_OVERRIDES = {"num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 512}


def _smoke_suite() -> list:
    """The CPU path CI runs: a 2-layer Llama-shaped model through every kind of layout."""
    kw = {"micro_batch": 2, "seq_len": 32, "overrides": SMOKE_OVERRIDES}
    return [_case("smoke-fsdp2", "fsdp2", M8, 4, **kw), _case("smoke-fsdp2-noreshard", "fsdp2", M8, 4, reshard=False, **kw),
            _case("smoke-fsdp2-mp-ckpt", "fsdp2", M8, 4, precision="mp", ckpt=True, **kw),
            _case("smoke-fsdp2-autocast", "fsdp2", M8, 4, precision="autocast", **kw),
            _case("smoke-hsdp", "fsdp2", M8, 8, shard=4, **kw), _case("smoke-ddp", "ddp", M8, 4, **kw),
            _case("smoke-tp-sp", "tp", M8, 2, sequence_parallel=True, **kw),
            _case("smoke-tp-fsdp2", "tp_fsdp2", M8, 4, tp=2, **kw)]


SUITES = {"h200": _h200_suite, "smoke": _smoke_suite}


# ---- one case, in the worker process -------------------------------------------------------
def _mesh(torch, case, device):
    from torch.distributed.device_mesh import init_device_mesh

    w = case["world"]
    if case["kind"] == "tp_fsdp2":
        return init_device_mesh(device, (w // case["tp"], case["tp"]), mesh_dim_names=("dp", "tp"))
    if case["kind"] == "tp":
        return init_device_mesh(device, (w,), mesh_dim_names=("tp",))
    shard = case.get("shard") or w
    if shard < w:
        return init_device_mesh(device, (w // shard, shard), mesh_dim_names=("replicate", "shard"))
    return init_device_mesh(device, (w,), mesh_dim_names=("shard",))


def _fsdp_kwargs(torch, case, mesh, device) -> dict:
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy

    kw = {"mesh": mesh, "reshard_after_forward": case.get("reshard", True)}
    if case.get("precision") == "mp":
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    if case.get("offload"):
        kw["offload_policy"] = CPUOffloadPolicy(pin_memory=device == "cuda")
    return kw


def _tp(model, mesh, case):
    from torch.distributed.tensor.parallel import parallelize_module

    if getattr(model.config, "tie_word_embeddings", False):
        raise ValueError("tensor parallel cases need untied embeddings (tie_word_embeddings=false)")
    root, layer = tp_plans(case.get("sequence_parallel", False))
    for blk in model.model.layers:
        parallelize_module(blk, mesh, layer)
    parallelize_module(model, mesh, root)


def _noop_allreduce_hook(state, bucket):
    """DDP comm hook under the fake group: the bucket's buffer, as the default all-reduce hook returns it
    (torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py, allreduce_hook), in a done future."""
    import torch

    fut = torch.futures.Future()
    fut.set_result(bucket.buffer())
    return fut


def _wrap(torch, model, case, device):
    """The model wrapped for its layout, its parameters materialised on ``device``."""
    kind = case["kind"]
    if kind == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        model.to_empty(device=device)
        # to_empty gives each module its own new tensor, so a tied output layer comes back untied
        # (DDP then trains one more vocab x hidden matrix); tie it again as from_pretrained does
        if getattr(model.config, "tie_word_embeddings", False):
            model.tie_weights()
        _init(torch, model)
        ddp = DDP(model, device_ids=[torch.cuda.current_device()] if device == "cuda" else None)
        ddp.register_comm_hook(None, _noop_allreduce_hook)
        return ddp
    from torch.distributed.fsdp import fully_shard

    mesh = _mesh(torch, case, device)
    if kind in ("tp", "tp_fsdp2"):
        _tp(model, mesh["tp"] if kind == "tp_fsdp2" else mesh, case)
    if kind in ("fsdp2", "tp_fsdp2"):
        kw = _fsdp_kwargs(torch, case, mesh["dp"] if kind == "tp_fsdp2" else mesh, device)
        for layer in model.model.layers:
            fully_shard(layer, **kw)
        fully_shard(model, **kw)
    model.to_empty(device="cpu" if case.get("offload") else device)
    _init(torch, model)
    return model


def _init(torch, model):
    from torch.distributed.tensor import DTensor

    with torch.no_grad():
        for p in model.parameters():
            (p.to_local() if isinstance(p, DTensor) else p).normal_(0.0, 0.02)
        for b in model.buffers():  # rotary inv_freq: its values do not matter here, finite ones do
            b.fill_(1.0)


def _local(t):
    from torch.distributed.tensor import DTensor

    return t.to_local() if isinstance(t, DTensor) else t


def run_case(torch, case: dict, device: str, steps: int) -> dict:
    import contextlib
    import gc

    cuda = device == "cuda"
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.synchronize()
    base = torch.cuda.memory_allocated() if cuda else 0
    fp32 = case.get("precision") in ("mp", "autocast")
    model, cfg = build_model(torch, hf_config_dict(case, case.get("overrides") or {}), "meta",
                             torch.float32 if fp32 else torch.bfloat16)
    total = sum(p.numel() for p in model.parameters())
    if case.get("ckpt"):  # Trainer(gradient_checkpointing=True) on transformers 5: non-reentrant
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    t0 = time.perf_counter()
    model = _wrap(torch, model, case, device)
    opt = make_adamw(torch, model.parameters(), "cpu" if case.get("offload") else device)
    build_s = time.perf_counter() - t0
    dev = torch.device(device, torch.cuda.current_device()) if cuda else torch.device("cpu")
    g = torch.Generator(device="cpu").manual_seed(1)
    ids = torch.randint(0, cfg.vocab_size, (case["micro_batch"], case["seq_len"]), generator=g).to(dev)
    tp = case["kind"] in ("tp", "tp_fsdp2")
    pos = torch.arange(case["seq_len"], device=dev).unsqueeze(0)
    amp = (torch.autocast(device_type=device, dtype=torch.bfloat16) if case.get("precision") == "autocast"
           else contextlib.nullcontext())

    def step():
        with amp:
            if tp:  # vocabulary-sharded logits: torchtitan's loss_parallel cross-entropy
                from torch.distributed.tensor.parallel import loss_parallel

                logits = model(input_ids=ids, position_ids=pos).logits  # the root's hooks run (FSDP2's unshard)
                labels = torch.roll(ids, -1, 1)
                with loss_parallel():
                    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(), labels.flatten())
                    loss.backward()
            else:
                loss = model(input_ids=ids, labels=ids).loss
        if cuda and not tp:  # the forward's own peak (the loss included), before the backward starts
            fwd_peaks.append(torch.cuda.max_memory_allocated())
        if not tp:
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated() if cuda else 0
    times, fwd_peaks, step_peaks, host_ms = [], [], [], []
    snap = None
    for i in range(steps):
        if cuda and SNAPSHOT and i == steps - 1:  # the last step's allocations, for peak_live
            torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python")
        if cuda:
            torch.cuda.reset_peak_memory_stats()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
        t1 = time.perf_counter()
        loss = step()
        host_ms.append((time.perf_counter() - t1) * 1e3)  # the host's own time to issue the step
        if cuda:
            e1.record()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1))
            step_peaks.append(torch.cuda.max_memory_allocated())
            if SNAPSHOT and i == steps - 1:
                snap = torch.cuda.memory._snapshot()
                torch.cuda.memory._record_memory_history(enabled=None)
        else:
            times.append((time.perf_counter() - t1) * 1e3)
    prof = profile_step(torch, step) if cuda and PROFILE else None
    inner = getattr(model, "module", model)
    params = list(inner.parameters())
    rec = {"total_params": total, "local_param_numel": sum(_local(p).numel() for p in params),
           "local_param_bytes": sum(_local(p).numel() * _local(p).element_size() for p in params),
           "param_devices": sorted({str(_local(p).device).split(":")[0] for p in params}),
           "optimizer_state_numel": sum(_local(v).numel() for st in opt.state.values() for k, v in st.items()
                                        if k != "step" and torch.is_tensor(v)),
           "build_s": round(build_s, 2), "step_ms": [round(t, 3) for t in times],
           "step_ms_median": statistics.median(times[1:]) if len(times) > 1 else times[0],
           "host_ms": [round(t, 3) for t in host_ms],
           "loss_finite": bool(torch.isfinite(_local(loss.detach()).float()).all())}
    if snap is not None:
        rec["peak_live"] = peak_live(snap)
    if prof is not None:
        rec["profile"] = prof
    if cuda:
        peak = max(step_peaks)
        rec.update({"peak_bytes": peak, "base_bytes": base, "start_bytes": start - base, "peak_bytes_net": peak - base,
                    "step_peak_bytes": step_peaks, "forward_peak_bytes": fwd_peaks,
                    "max_reserved_bytes": torch.cuda.max_memory_reserved()})
    return rec


SNAPSHOT = os.environ.get("FAKE_PG_SNAPSHOT") == "1"  # record the last step's allocations (peak_live)
PROFILE = os.environ.get("FAKE_PG_PROFILE") == "1"  # one more step under torch.profiler (profile)
# FSDP's collectives skip the fake backend (FAKE_PG_NO_FILL=1): the fake group fills an all-gather's
# output with one copy_ of the input per rank and a reduce-scatter's with one more
# (torch/csrc/distributed/c10d/FakeProcessGroup.hpp, "emulate" NCCL's write), W kernel launches and a
# whole layer's writes per all-gather that a real run leaves to NCCL (communication, not compute); at
# 1,024 ranks they were most of the measured step. Allocations are the same (those copies allocate
# nothing); the gathered values are then whatever the buffers held, so the loss may not be finite.
NO_FILL = os.environ.get("FAKE_PG_NO_FILL") == "1"
_SKIPPED = ("all_gather_into_tensor", "all_gather_single", "reduce_scatter_tensor", "reduce_scatter_single",
            "all_reduce")


def skip_collective_fill(dist) -> list:
    """Replace torch.distributed's tensor collectives that FSDP2 calls (as ``dist.<name>`` at call time,
    torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py) by ones that do nothing: None, or a
    completed Work for ``async_op=True``; DTensor's functional collectives are not affected. Returns the
    names replaced."""
    import torch

    def make(orig):
        def skipped(*args, async_op=False, **kwargs):
            if not async_op:
                return None
            fut = torch.futures.Future()
            fut.set_result(None)
            return torch._C._distributed_c10d._create_work_from_future(fut)
        skipped.__wrapped__ = orig
        return skipped

    done = []
    for name in _SKIPPED:
        if hasattr(dist, name):
            setattr(dist, name, make(getattr(dist, name)))
            done.append(name)
    return done


def profile_step(torch, step, top: int = 40) -> dict:
    """One more step (not among the timed ones) under torch.profiler: its wall time, the GPU time of
    its kernels, copies and memsets (summed over streams) and the largest of them by name."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        step()
        host = time.perf_counter() - t0
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    avg = prof.key_averages()
    kt = kernel_times(avg)
    rows = sorted(([k, round(v[0], 3), int(v[1])] for k, v in kt.items()), key=lambda r: -r[1])
    # where the host's time goes: the ops by their own CPU time, and the framework's labelled regions
    # (FSDP2's record_function names, the optimizer step) by their total
    cpu = [e for e in avg if e.device_type.name == "CPU"]
    by_self = sorted(cpu, key=lambda e: -e.self_cpu_time_total)[:top]
    regions = sorted((e for e in cpu if any(t in e.key for t in ("FSDP", "Optimizer", "checkpoint", "DTensor"))),
                     key=lambda e: -e.cpu_time_total)[:top]
    return {"wall_ms": round(wall * 1e3, 3), "host_ms": round(host * 1e3, 3),
            "gpu_ms": round(sum(v[0] for v in kt.values()), 3), "gpu_launches": int(sum(v[1] for v in kt.values())),
            "kernels": rows[:top],
            "cpu_self_ms": [[e.key, round(e.self_cpu_time_total / 1e3, 3), int(e.count)] for e in by_self],
            "cpu_regions_ms": [[e.key, round(e.cpu_time_total / 1e3, 3), int(e.count)] for e in regions]}


def _site(frames) -> str:
    """Where a block was allocated: the innermost frame in transformers or torch's Python (not the allocator's)."""
    for f in frames or ():
        name = f.get("filename", "")
        if ("transformers/" in name or "torch/" in name) and "memory" not in name.rsplit("/", 1)[-1]:
            return f"{'/'.join(name.split('/')[-2:])}:{f.get('line')} {f.get('name')}"
    return "?"


def peak_live(snap: dict, top: int = 25) -> list:
    """The blocks alive at the largest allocated level of a recorded step, summed by allocation site:
    [[bytes, count, site], ...], largest first (torch.cuda.memory._snapshot's device_traces replayed)."""
    trace = [e for e in snap["device_traces"][0] if e["action"] in ("alloc", "free_requested")]
    cur = peak = 0
    peak_i = -1
    for i, e in enumerate(trace):
        cur += e["size"] if e["action"] == "alloc" else -e["size"]
        if cur > peak:
            peak, peak_i = cur, i
    live: dict = {}
    for e in trace[:peak_i + 1]:
        if e["action"] == "alloc":
            live[e["addr"]] = e
        else:
            live.pop(e["addr"], None)
    sites: dict = {}
    for e in live.values():
        k = _site(e.get("frames"))
        b, n = sites.get(k, (0, 0))
        sites[k] = (b + e["size"], n + 1)
    return [[b, n, k] for k, (b, n) in sorted(sites.items(), key=lambda kv: -kv[1][0])[:top]]


def host_dispatch_us() -> float:
    """Microseconds of host time per eager op, the probe's own test (planner_app.probe.bench.TorchBackend
    .dispatch, what a calibration profile scales the engine's launch_s by): median of 7 rounds."""
    from planner_app.probe.bench import TorchBackend

    return round(statistics.median(TorchBackend().dispatch(7)) * 1e6, 3)


def worker(names: list, device: str, steps: int, out: str) -> int:
    """Run ``names`` (one world size and rank) in this process; write their records to ``out``."""
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    cases = [ALL[n] for n in names]
    world, rank = cases[0]["world"], cases[0]["rank"]
    if any((c["world"], c["rank"]) != (world, rank) for c in cases):
        raise SystemExit("--worker: the cases must share one world size and rank")
    if device == "cuda":
        torch.cuda.set_device(0)
        for dt in (torch.bfloat16, torch.float32):  # cuBLAS workspaces of this thread and autograd's: in base_bytes
            a = torch.randn(256, 256, device="cuda", dtype=dt, requires_grad=True)
            (a @ a).sum().backward()
        del a
        torch.cuda.synchronize()
    dist.init_process_group("fake", rank=rank, world_size=world, store=FakeStore())
    skipped = skip_collective_fill(dist) if NO_FILL else []
    recs = []
    for c in cases:
        rec = {k: v for k, v in c.items() if k != "overrides"}
        if device == "cuda":  # the host's speed as the probe measures it, next to each case's step times
            rec["dispatch_us_per_op"] = host_dispatch_us()
        if skipped:
            rec["collectives_skipped"] = skipped
        if c.get("overrides"):
            rec["overrides"] = c["overrides"]
        try:
            rec.update(run_case(torch, c, device, steps))
            rec["status"] = "ok"
        except Exception as e:  # an OOM or an unsupported layout is data; the next case runs
            oom = "out of memory" in str(e).lower()
            rec.update({"status": "oom" if oom else "failed", "error": f"{type(e).__name__}: {str(e)[:400]}"})
        recs.append(rec)
        print(json.dumps({k: rec.get(k) for k in ("name", "status", "peak_bytes_net", "step_ms_median", "error")
                          if k in rec}), flush=True)
        write_json(out, recs)
    dist.destroy_process_group()
    return 0


ALL = {c["name"]: c for s in SUITES.values() for c in s()}


def groups(cases: list) -> list:
    """Cases by (world size, measured rank), in their first appearance's order."""
    out: dict = {}
    for c in cases:
        out.setdefault((c["world"], c["rank"]), []).append(c["name"])
    return list(out.values())


def versions(device: str) -> dict:
    import torch
    import transformers

    v = {"torch": torch.__version__, "transformers": transformers.__version__, "python": platform.python_version(),
         "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu"}
    if device == "cuda":
        v["cuda"] = torch.version.cuda
    return v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    sel = ap.add_mutually_exclusive_group(required=True)
    sel.add_argument("--suite", choices=sorted(SUITES))
    sel.add_argument("--cases", help="case names separated by commas")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--steps", type=int, default=3, help="steps per case (the first is a warm-up for the time)")
    ap.add_argument("--budget-s", type=float, default=1e9, help="start no new group after this many seconds")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.suite:
        cases = SUITES[args.suite]()
    else:
        names = [n.strip() for n in args.cases.split(",") if n.strip()]
        bad = [n for n in names if n not in ALL]
        if bad:
            raise SystemExit(f"--cases: unknown {', '.join(bad)}; allowed: {', '.join(ALL)}")
        cases = [ALL[n] for n in names]
    if args.worker:
        return worker([c["name"] for c in cases], args.device, args.steps, args.out)
    t0 = time.time()
    data = {"info": {"command": command_line(), "date": time.strftime("%Y-%m-%d"), "steps": args.steps,
                     "backend": "fake process group (torch.testing._internal.distributed.fake_pg); one process "
                                "per world size plays the measured rank", **versions(args.device)},
            "unrunnable": UNRUNNABLE, "cases": []}
    part = args.out + ".part"
    for names in groups(cases):
        if time.time() - t0 > args.budget_s:
            data["cases"].extend({**{k: v for k, v in ALL[n].items() if k != "overrides"}, "status": "not run",
                                  "error": "--budget-s reached"} for n in names)
            continue
        cmd = [sys.executable, "-m", "benchmarks.gpu.fake_pg_runs", "--worker", "--cases", ",".join(names),
               "--device", args.device, "--steps", str(args.steps), "--out", part]
        proc = subprocess.run(cmd, check=False)
        try:
            with open(part, encoding="utf-8") as f:
                recs = json.load(f)
            os.remove(part)
        except OSError:
            recs = []
        done = {r["name"] for r in recs}
        recs += [{**{k: v for k, v in ALL[n].items() if k != "overrides"}, "status": "failed",
                  "error": f"worker exited with {proc.returncode} before this case finished"}
                 for n in names if n not in done]
        data["cases"].extend(recs)
        write_json(args.out, data)
    write_json(args.out, data)
    ok = sum(r["status"] == "ok" for r in data["cases"])
    print(f"{ok} of {len(data['cases'])} cases ok in {time.time() - t0:.0f} s -> {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
