"""Measure multi-GPU training of Hugging Face models: FSDP2, DDP, DeepSpeed ZeRO and tensor parallel.

Ground truth for issue 18, in the manner of benchmarks/gpu/gpu_finetune_runs.py: each case builds a
model from a Hugging Face ``config.json`` (tests/data/hf_configs/) with random weights (no
download), wraps it for its parallelism, trains a few steps on random tokens and records, on every
rank, ``torch.cuda.max_memory_allocated``, the step time and the exposed communication time. Rank 0
gathers every rank's record and writes one JSON with the exact command, versions and world size.

Usage (on the GPU machine, from the project root; one command per GPU count)::

    torchrun --standalone --nproc-per-node 8 -m benchmarks.gpu.gpu_multi_runs --out tests/data/multi_runs_h200x8.json
    torchrun --standalone --nproc-per-node 2 -m benchmarks.gpu.gpu_multi_runs --out r.json --cases ddp-1b,tp-sp-7b
    # CPU processes, gloo (control flow, sharding and JSON only; no CUDA memory):
    torchrun --standalone --nproc-per-node 2 -m benchmarks.gpu.gpu_multi_runs --device cpu --out r.json \
        --override num_hidden_layers=2,hidden_size=64 --micro-batch 2 --seq-len 32

What each kind of case runs (``loss = model(input_ids=x, labels=x).loss`` unless said otherwise;
sdpa attention; ``use_cache=False``; AdamW, fused on CUDA):
- ``ddp``: ``DistributedDataParallel(model)`` with its defaults (bucket_cap_mb=25,
  gradient_as_bucket_view=False); bf16 weights, gradients and optimizer states.
- ``fsdp2``: ``fully_shard`` on every decoder layer, then on the root (torchtitan's way), full
  sharding over a 1D mesh or hybrid sharding over a 2D ``(replicate, shard)`` mesh;
  ``reshard_after_forward=True``; optionally ``CPUOffloadPolicy()`` and ``MixedPrecisionPolicy(
  param_dtype=bf16, reduce_dtype=fp32)`` over fp32 weights (case ``mp``); bf16 weights otherwise.
- ``deepspeed``: ``deepspeed.initialize`` with ZeRO stage 1/2/3, ``bf16.enabled`` (fp32 master
  weights and optimizer states), a client ``torch.optim.AdamW`` (no JIT-built ops needed) and
  DeepSpeed's default bucket sizes; ``engine.backward(loss)``, ``engine.step()``. Without an
  importable ``deepspeed`` the case is recorded as ``status: "skipped"``, "deepspeed not installed".
- ``tp``: ``parallelize_module`` on every Llama decoder layer (q/k/v, gate/up ColwiseParallel;
  o/down RowwiseParallel), the embedding RowwiseParallel and the output layer ColwiseParallel with
  vocabulary-sharded logits and ``loss_parallel()`` cross-entropy (as torchtitan); with sequence
  parallelism the norms are SequenceParallel and attention/MLP inputs are all-gathered
  (PrepareModuleInput). The loss is computed outside Hugging Face's ``ForCausalLMLoss`` (it
  cannot take sharded logits): ``cross_entropy(logits.float(), labels shifted by one)``.

Measurements, per rank: peak = ``max_memory_allocated`` over the warm-up and measured steps (reset
after the model is built and wrapped), also less ``base_bytes`` (allocated before the case's model
was built: cuBLAS workspaces, NCCL's warm-up tensors and whatever earlier cases left, which
``left_by_earlier_cases_bytes`` shows); step time = CUDA events around one whole step,
median of the steps after ``--warmup``; exposed communication, from ``torch.profiler`` over
``--profile-steps`` extra steps (not timed): the time covered by NCCL kernels and not covered by
any other GPU kernel, memcpy or memset (interval unions on the device timeline), per step. NCCL kernels include
time spent waiting for a late peer, which counts as exposed too. On CPU (gloo) there are no
device kernels: the figure is the time covered by c10d/gloo collective CPU ops, a rough number
that is recorded but never compared.

A case that fails on every rank (an OOM) is data; the run goes on. A rank that fails alone leaves
the others waiting in a collective until the process group's timeout ends the run; rank 0 writes
the JSON after every case, so the cases done before survive.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import traceback

from benchmarks.gpu.bench_io import command_line, write_json  # all-or-nothing JSON write

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG_DIR = os.path.join(HERE, "..", "..", "tests", "data", "hf_configs")
M1B, M7B = "llama-3.2-1b", "llama-2-7b"  # 1B: tied embeddings; 7B: untied (what TP shards cleanly)


def _case(name, kind, config, micro_batch, seq_len, recipe="bf16", **kw):
    return dict(name=name, kind=kind, config=config, micro_batch=micro_batch, seq_len=seq_len, recipe=recipe, **kw)


CASES = [
    _case("ddp-1b", "ddp", M1B, 4, 2048),
    _case("ddp-7b", "ddp", M7B, 1, 2048),
    _case("fsdp2-full-1b", "fsdp2", M1B, 4, 2048, mesh="full"),
    _case("fsdp2-full-7b", "fsdp2", M7B, 2, 2048, mesh="full"),
    _case("fsdp2-full-offload-1b", "fsdp2", M1B, 4, 2048, mesh="full", offload=True),
    _case("fsdp2-hybrid-1b", "fsdp2", M1B, 4, 2048, mesh="hybrid"),
    _case("fsdp2-hybrid-offload-1b", "fsdp2", M1B, 4, 2048, mesh="hybrid", offload=True),
    # fp32 weights, bf16 compute: MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)
    _case("fsdp2-full-mp-1b", "fsdp2", M1B, 4, 2048, recipe="fsdp2-mp-bf16", mesh="full", mp=True),
    *[_case(f"ds-zero{z}-1b", "deepspeed", M1B, 4, 2048, recipe="mixed-bf16", zero=z) for z in (1, 2, 3)],
    _case("ds-zero3-7b", "deepspeed", M7B, 2, 2048, recipe="mixed-bf16", zero=3),
    _case("tp-7b", "tp", M7B, 2, 2048, sequence_parallel=False),
    _case("tp-sp-7b", "tp", M7B, 2, 2048, sequence_parallel=True),
]
BY_NAME = {c["name"]: c for c in CASES}
# NCCL kernels (ncclDevKernel_*, ncclKernel_*) on the device; c10d/gloo ops on the CPU.
COMM_KERNEL_MARKS = ("nccl",)
COMM_CPU_MARKS = ("c10d::", "gloo:", "nccl:")


def log(*a):
    if int(os.environ.get("RANK", "0")) == 0:
        print(*a, file=sys.stderr, flush=True)


# ---- interval arithmetic for the exposed communication time --------------------------------
def merge(intervals):
    """Sorted, non-overlapping union of (start, end) intervals."""
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(x) for x in out]


def covered(intervals) -> float:
    return sum(e - s for s, e in merge(intervals))


def exposed(comm, compute) -> float:
    """Length of the union of ``comm`` not covered by the union of ``compute`` (same units)."""
    comm, comp = merge(comm), merge(compute)
    total, j = 0.0, 0
    for s, e in comm:
        overlap = 0.0
        while j < len(comp) and comp[j][1] <= s:
            j += 1
        k = j
        while k < len(comp) and comp[k][0] < e:
            overlap += min(e, comp[k][1]) - max(s, comp[k][0])
            k += 1
        total += (e - s) - overlap
    return total


def trace_intervals(trace: dict, device: str):
    """(comm, compute) intervals in microseconds from a chrome trace of torch.profiler."""
    comm, comp = [], []
    for ev in trace.get("traceEvents", []):
        if ev.get("ph") != "X" or "dur" not in ev:
            continue
        name, cat = str(ev.get("name", "")), str(ev.get("cat", ""))
        iv = (float(ev["ts"]), float(ev["ts"]) + float(ev["dur"]))
        if device == "cuda":
            if cat not in ("kernel", "gpu_memcpy", "gpu_memset"):
                continue
            (comm if any(m in name.lower() for m in COMM_KERNEL_MARKS) else comp).append(iv)
        elif cat == "cpu_op" and any(m in name for m in COMM_CPU_MARKS):
            comm.append(iv)
    return comm, comp


# ---- models --------------------------------------------------------------------------------
def parse_overrides(text: str) -> dict:
    """``key=value,key=value`` (values parsed as JSON where they can be: numbers, true, null)."""
    out = {}
    for item in filter(None, (t.strip() for t in (text or "").split(","))):
        if "=" not in item:
            raise SystemExit(f"--override: '{item}' is not key=value")
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


def hf_config_dict(case: dict, overrides: dict) -> dict:
    with open(os.path.join(CONFIG_DIR, case["config"] + ".json"), encoding="utf-8") as f:
        d = json.load(f)
    d.update(overrides)
    return d


def build_model(torch, cfg_dict: dict, device, dtype):
    from transformers import AutoConfig, AutoModelForCausalLM

    d = dict(cfg_dict)
    mt = d.pop("model_type")
    d.pop("architectures", None)
    cfg = AutoConfig.for_model(mt, **d)
    cfg.use_cache = False
    torch.manual_seed(0)  # every rank builds the same weights (TP slices them locally)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation="sdpa")
    model.train()
    return model, cfg


def local_numel(torch, t) -> int:
    from torch.distributed.tensor import DTensor

    if isinstance(t, DTensor):
        return t.to_local().numel()
    if hasattr(t, "ds_tensor"):  # DeepSpeed ZeRO-3 partition (padded to a multiple of the world)
        return t.ds_tensor.numel()
    return t.numel()


def optimizer_state_numel(torch, opt) -> int:
    """Elements of the optimizer's tensors on this rank (exp_avg, exp_avg_sq; step excluded)."""
    n = 0
    for st in getattr(opt, "state", {}).values():
        for k, v in st.items():
            if k != "step" and torch.is_tensor(v):
                n += local_numel(torch, v)
    return n


def make_adamw(torch, params, device):
    """AdamW, fused on CUDA (Trainer's and torchtitan's default), foreach on CPU. DTensors and
    plain tensors (the norms that tensor parallelism without sequence parallelism replicates) go
    into separate groups: one fused/foreach call cannot mix them."""
    from torch.distributed.tensor import DTensor

    params = list(params)
    groups = [{"params": [p for p in params if isinstance(p, DTensor)]},
              {"params": [p for p in params if not isinstance(p, DTensor)]}]
    impl = {"fused": True} if device == "cuda" else {"foreach": True}
    return torch.optim.AdamW([g for g in groups if g["params"]], lr=1e-5, **impl)


def wrap_fsdp2(torch, model, case, world, replicate, device):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard

    if case.get("mesh") == "hybrid":
        if world % replicate:
            raise ValueError(f"hybrid sharding: world size {world} is not a multiple of --hsdp-replicate {replicate}")
        shape, names = (replicate, world // replicate), ("replicate", "shard")
    else:
        shape, names = (world,), ("shard",)
    mesh = init_device_mesh(device, shape, mesh_dim_names=names)
    kw = {"mesh": mesh, "reshard_after_forward": True}
    if case.get("offload"):
        kw["offload_policy"] = CPUOffloadPolicy(pin_memory=device == "cuda")
    if case.get("mp"):
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.model.layers:
        fully_shard(layer, **kw)
    fully_shard(model, **kw)
    return model, {"mesh_shape": list(shape), "mesh_dim_names": list(names)}


def tp_plans(sp: bool):
    """(root plan, per-layer plan) for a Hugging Face Llama, torchtitan's (torchtitan/models/llama3/
    infra/parallelize.py, apply_tp) with Hugging Face's module names."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, PrepareModuleInput, RowwiseParallel, SequenceParallel

    seq = Shard(1) if sp else Replicate()
    root = {"model.embed_tokens": RowwiseParallel(input_layouts=Replicate(), output_layouts=seq),
            "lm_head": ColwiseParallel(input_layouts=seq, output_layouts=Shard(-1), use_local_output=False)}
    layer = {"self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
             "self_attn.v_proj": ColwiseParallel(), "self_attn.o_proj": RowwiseParallel(output_layouts=seq),
             "mlp.gate_proj": ColwiseParallel(), "mlp.up_proj": ColwiseParallel(),
             "mlp.down_proj": RowwiseParallel(output_layouts=seq)}
    if sp:
        root["model.norm"] = SequenceParallel()
        layer.update({
            "input_layernorm": SequenceParallel(), "post_attention_layernorm": SequenceParallel(),
            # Hugging Face calls self_attn(hidden_states=...) by keyword
            "self_attn": PrepareModuleInput(input_kwarg_layouts={"hidden_states": Shard(1)},
                                            desired_input_kwarg_layouts={"hidden_states": Replicate()}),
            "mlp": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),))})
    return root, layer


def wrap_tp(torch, model, case, world, device):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import parallelize_module

    cfg = model.config
    if getattr(cfg, "tie_word_embeddings", False):
        raise ValueError("tensor parallel cases need untied embeddings (tie_word_embeddings=false)")
    for field in ("num_attention_heads", "num_key_value_heads"):
        if getattr(cfg, field) % world:
            raise ValueError(f"tensor parallel over {world} ranks: {field}={getattr(cfg, field)} is not divisible")
    mesh = init_device_mesh(device, (world,), mesh_dim_names=("tp",))
    root, layer = tp_plans(case.get("sequence_parallel", False))
    for blk in model.model.layers:
        parallelize_module(blk, mesh, layer)
    parallelize_module(model, mesh, root)
    return model, {"mesh_shape": [world], "mesh_dim_names": ["tp"]}


def deepspeed_config(case, micro_batch, world):
    """DeepSpeed's defaults but for what the case sets (docs: deepspeed.ai/docs/config-json)."""
    return {"train_micro_batch_size_per_gpu": micro_batch, "gradient_accumulation_steps": 1,
            "train_batch_size": micro_batch * world, "bf16": {"enabled": True},
            "zero_optimization": {"stage": case["zero"]}, "zero_allow_untested_optimizer": True,
            "steps_per_print": 1 << 30, "wall_clock_breakdown": False}


# ---- one case --------------------------------------------------------------------------------
class Clock:
    """Step time: CUDA events on the GPU, perf_counter after a barrier on the CPU."""

    def __init__(self, torch, device):
        self.torch, self.device = torch, device

    def start(self):
        if self.device == "cuda":
            self.e0, self.e1 = (self.torch.cuda.Event(enable_timing=True) for _ in range(2))
            self.e0.record()
        else:
            self.t0 = time.perf_counter()

    def stop_ms(self) -> float:
        if self.device == "cuda":
            self.e1.record()
            self.torch.cuda.synchronize()
            return self.e0.elapsed_time(self.e1)
        return (time.perf_counter() - self.t0) * 1e3


def run_case(torch, dist, case, args, overrides, base_bytes):
    device, world, rank = args.device, dist.get_world_size(), dist.get_rank()
    cuda = device == "cuda"
    b = args.micro_batch or case["micro_batch"]
    s = args.seq_len or case["seq_len"]
    rec = {"rank": rank, "micro_batch": b, "seq_len": s}
    # What an earlier case left allocated (a framework's global references) is not this case's.
    case_base = torch.cuda.memory_allocated() if cuda else 0
    rec["left_by_earlier_cases_bytes"] = case_base - base_bytes
    t0 = time.perf_counter()
    dtype = torch.float32 if case.get("mp") or case["kind"] == "deepspeed" else torch.bfloat16
    model, cfg = build_model(torch, hf_config_dict(case, overrides), device, dtype)
    rec["total_params"] = sum(p.numel() for p in model.parameters())
    kind, engine = case["kind"], None
    if kind == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        # defaults: bucket_cap_mb=25, gradient_as_bucket_view=False (torch/nn/parallel/distributed.py)
        model = DDP(model, device_ids=[torch.cuda.current_device()] if cuda else None)
        rec["wrap"] = {"bucket_cap_mb": 25, "gradient_as_bucket_view": False}
        opt = make_adamw(torch, model.parameters(), device)
    elif kind == "fsdp2":
        model, rec["wrap"] = wrap_fsdp2(torch, model, case, world, args.hsdp_replicate, device)
        opt = make_adamw(torch, model.parameters(), device)
    elif kind == "tp":
        model, rec["wrap"] = wrap_tp(torch, model, case, world, device)
        opt = make_adamw(torch, model.parameters(), device)
    elif kind == "deepspeed":
        import deepspeed

        conf = deepspeed_config(case, b, world)
        opt0 = make_adamw(torch, model.parameters(), device)
        engine, opt, _, _ = deepspeed.initialize(model=model, optimizer=opt0, config=conf)
        model, rec["wrap"] = engine, {"deepspeed_config": conf}
    else:
        raise ValueError(f"unknown kind {kind}")
    rec["local_param_numel"] = sum(local_numel(torch, p) for p in model.parameters())
    rec["local_param_bytes"] = sum(local_numel(torch, p) * p.element_size() for p in model.parameters())
    rec["param_devices"] = sorted({str(getattr(p, "device", "?")).split(":")[0] for p in model.parameters()})
    rec["build_s"] = round(time.perf_counter() - t0, 2)

    dev = torch.device(device, torch.cuda.current_device()) if cuda else torch.device("cpu")
    g = torch.Generator(device="cpu").manual_seed(1 + rank)
    ids = torch.randint(0, cfg.vocab_size, (b, s), generator=g).to(dev)
    labels = torch.roll(ids, -1, 1)  # next token (the last position predicts the first: random data anyway)
    pos = torch.arange(s, device=dev).unsqueeze(0)

    def step():
        if kind == "tp":
            from torch.distributed.tensor.parallel import loss_parallel

            hidden = model.model(input_ids=ids, position_ids=pos).last_hidden_state
            logits = model.lm_head(hidden)  # DTensor, vocabulary-sharded
            with loss_parallel():
                loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(), labels.flatten())
                loss.backward()
        elif engine is not None:
            loss = engine(input_ids=ids, labels=ids).loss
            engine.backward(loss)
            engine.step()
            return loss
        else:
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        rec["start_bytes"] = torch.cuda.memory_allocated() - case_base
    clock, times = Clock(torch, device), []
    for _ in range(args.warmup + args.steps):
        dist.barrier()
        clock.start()
        loss = step()
        times.append(clock.stop_ms())
    rec["loss_last"] = float(loss.detach().full_tensor() if hasattr(loss, "full_tensor") else loss.detach())
    rec["step_ms"] = times
    rec["step_ms_median"] = statistics.median(times[args.warmup:])
    if cuda:
        rec["peak_bytes"] = torch.cuda.max_memory_allocated()
        rec["base_bytes"] = case_base
        rec["peak_bytes_net"] = rec["peak_bytes"] - case_base
        rec["max_reserved_bytes"] = torch.cuda.max_memory_reserved()
        free, total = torch.cuda.mem_get_info()
        rec["device_used_bytes"] = total - free
    else:
        rec["peak_bytes"] = None  # CUDA memory only; the CPU run checks the control flow
    rec["optimizer_state_numel"] = optimizer_state_numel(torch, getattr(opt, "optimizer", opt))
    rec.update(profile_comm(torch, dist, step, device, args.profile_steps))
    rec["status"] = "ok"
    return rec


def profile_comm(torch, dist, step, device, steps) -> dict:
    """Communication and exposed communication per step (ms) from one torch.profiler trace."""
    if steps <= 0:
        return {}
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    dist.barrier()
    with profile(activities=acts) as prof:
        for _ in range(steps):
            step()
        if device == "cuda":
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
    comm, comp = trace_intervals(trace, device)
    return {"comm_ms": covered(comm) / 1e3 / steps, "exposed_comm_ms": exposed(comm, comp) / 1e3 / steps,
            "compute_ms": covered(comp) / 1e3 / steps, "comm_events": len(comm), "profiled_steps": steps,
            "exposed_comm_method": ("NCCL kernel time not covered by other kernels (device timeline)"
                                    if device == "cuda" else "time inside c10d/gloo CPU ops (CPU timeline)")}


# ---- the run ---------------------------------------------------------------------------------
def versions(torch, device) -> dict:
    import transformers

    v = {"torch": torch.__version__, "transformers": transformers.__version__, "python": platform.python_version()}
    try:
        import deepspeed

        v["deepspeed"] = deepspeed.__version__
    except Exception as e:  # noqa: BLE001 - recorded, the run goes on
        v["deepspeed"] = f"not installed ({type(e).__name__}: {str(e)[:120]})"
    if device == "cuda":
        v["cuda"] = torch.version.cuda
        v["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    return v


def selected(spec: str):
    if spec == "all":
        return list(CASES)
    names = [n.strip() for n in spec.split(",") if n.strip()]
    bad = [n for n in names if n not in BY_NAME]
    if bad:
        raise SystemExit(f"--cases: unknown {', '.join(bad)}; allowed: all or {', '.join(BY_NAME)}")
    return [BY_NAME[n] for n in names]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", default="all", help="all or names separated by commas")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--steps", type=int, default=4, help="measured steps (after --warmup)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--profile-steps", type=int, default=1, help="extra steps under torch.profiler (0: none)")
    ap.add_argument("--hsdp-replicate", type=int, default=0,
                    help="replicas of the hybrid-sharding mesh (default 2 from 4 ranks on, else 1)")
    ap.add_argument("--override", default="", help="config.json fields for every case: key=value,...")
    ap.add_argument("--micro-batch", type=int, default=0, help="replace every case's micro-batch")
    ap.add_argument("--seq-len", type=int, default=0, help="replace every case's sequence length")
    ap.add_argument("--budget-s", type=float, default=3000.0, help="start no new case after this")
    ap.add_argument("--timeout-s", type=float, default=600.0, help="process group timeout")
    args = ap.parse_args(argv)
    cases = selected(args.cases)
    overrides = parse_overrides(args.override)
    t_start = time.time()

    import datetime

    import torch
    import torch.distributed as dist

    cuda = args.device == "cuda"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl" if cuda else "gloo", timeout=datetime.timedelta(seconds=args.timeout_s))
    world, rank = dist.get_world_size(), dist.get_rank()
    if args.hsdp_replicate <= 0:
        args.hsdp_replicate = 2 if world >= 4 else 1
    cmd = command_line(f"torchrun --standalone --nproc-per-node {os.environ.get('LOCAL_WORLD_SIZE', world)}")
    info = {"command": cmd, "world_size": world, "device": args.device, "backend": dist.get_backend(),
            "date": time.strftime("%Y-%m-%d"), "steps": args.steps, "warmup": args.warmup,
            "profile_steps": args.profile_steps, "hsdp_replicate": args.hsdp_replicate, "overrides": overrides,
            "timing": ("CUDA events" if cuda else "perf_counter") + " around each whole step (barrier before); "
                      "median of the steps after the warm-up",
            **versions(torch, args.device),
            "env": {k: os.environ[k] for k in ("CUDA_VISIBLE_DEVICES", "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                               "OMP_NUM_THREADS") if k in os.environ}}
    if cuda:
        info["gpu"] = torch.cuda.get_device_name(local_rank)
        info["gpu_total_bytes"] = torch.cuda.mem_get_info()[1]
        a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
        (a @ a).sum().item()
        (a.float() @ a.float()).sum().item()
        del a
        dist.all_reduce(torch.ones(1, device="cuda"))  # NCCL's communicator exists before any case
        torch.cuda.synchronize()
    base_bytes = torch.cuda.memory_allocated() if cuda else 0
    result = {"info": info, "cases": []}
    have_ds = not info["deepspeed"].startswith("not installed")

    def save():
        if rank != 0:
            return
        info["wall_s"] = round(time.time() - t_start, 1)
        write_json(args.out, result)

    for case in cases:
        settings = dict(case, micro_batch=args.micro_batch or case["micro_batch"], seq_len=args.seq_len or case["seq_len"])
        if case.get("mesh") == "hybrid":
            settings["hsdp_replicate"] = args.hsdp_replicate
        if time.time() - t_start > args.budget_s:
            rec = {"rank": rank, "status": "skipped", "error": "time budget"}
        elif case["kind"] == "deepspeed" and not have_ds:
            rec = {"rank": rank, "status": "skipped", "error": "deepspeed not installed"}
        else:
            log("case", case["name"], f"({time.time() - t_start:.0f} s)")
            t0 = time.time()
            try:
                rec = run_case(torch, dist, case, args, overrides, base_bytes)
            except Exception as e:  # noqa: BLE001 - a failed case (OOM on every rank) is data
                rec = {"rank": rank, "status": "oom" if "out of memory" in str(e).lower() else "error",
                       "error": f"{type(e).__name__}: {str(e)[:400]}", "traceback_tail": traceback.format_exc()[-1500:]}
                if cuda:
                    rec["max_allocated_bytes_at_error"] = torch.cuda.max_memory_allocated()
            rec["case_wall_s"] = round(time.time() - t0, 1)
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
        ranks = [None] * world
        dist.all_gather_object(ranks, rec)
        result["cases"].append({**settings, "status": "ok" if all(r["status"] == "ok" for r in ranks) else
                                next(r["status"] for r in ranks if r["status"] != "ok"), "ranks": ranks})
        r0 = ranks[0]
        if r0["status"] == "ok":
            peak = max((r["peak_bytes"] or 0) for r in ranks) / 1e9
            log(f"  peak {peak:.2f} GB  step {r0['step_ms_median']:.1f} ms  exposed comm "
                f"{r0.get('exposed_comm_ms', float('nan')):.1f} ms ({r0.get('case_wall_s')} s)")
        else:
            log(f"  {r0['status']}: {r0.get('error', '')[:300]}")
        save()
    save()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
