"""Measure fine-tuning and generation memory/time of Hugging Face models on a local GPU.

Ground truth for issue 14 (optimizer implementations, LoRA, QLoRA, long context and
``model.generate()``), in the manner of benchmarks/gpu/gpu_training_runs.py: each case builds
a model from a Hugging Face ``config.json`` (tests/data/hf_configs/) with random weights
directly on the GPU (no download), runs a few steps on random tokens and records
``torch.cuda.max_memory_allocated`` per phase (forward, backward, optimizer step) and the
step time (CUDA events, median of the steps after the first two).

Usage (on the GPU machine, from the project root)::

    python -m benchmarks.gpu.gpu_finetune_runs --out tests/data/finetune_runs_h200.json
    python -m benchmarks.gpu.gpu_finetune_runs --cases lora-7b-r8-qv --steps 4

Training loop: ``loss = model(input_ids=x, labels=x).loss``, ``loss.backward()``,
``opt.step()``, ``opt.zero_grad(set_to_none=True)``; ``use_cache=False``; bf16 weights,
sdpa attention. The optimizer is built over the parameters with ``requires_grad``.
Gradient checkpointing is ``model.gradient_checkpointing_enable()`` (transformers' default:
non-reentrant, every layer). LoRA is PEFT's ``get_peft_model(model, LoraConfig(r=...,
target_modules=..., task_type="CAUSAL_LM"))`` with PEFT's other defaults (lora_alpha 8,
dropout 0, adapter weights autocast to fp32). QLoRA quantizes the built model's Linear
layers (all but lm_head) to bitsandbytes ``Linear4bit`` (nf4, double quantization,
bf16 compute), as transformers' bitsandbytes quantizer does on load; one case loads
through ``from_pretrained(tmp, quantization_config=BitsAndBytesConfig(...))`` instead.
Peaks are relative to the memory allocated before the model was built (cuBLAS
workspaces). ``device_used_bytes`` (from ``cudaMemGetInfo``) also counts memory that the
caching allocator reserves and managed memory (bitsandbytes' paged optimizers).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import traceback

from benchmarks.gpu.bench_io import command_line, write_json  # all-or-nothing JSON write

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG_DIR = os.path.join(HERE, "..", "..", "tests", "data", "hf_configs")

QV = ["q_proj", "v_proj"]
M1B, M7B = "llama-3.2-1b", "llama-2-7b"
DEV = "cuda"  # a CPU smoke test of the control flow may set "cpu" and stub torch.cuda


def _train(name, cfg, b, s, opt, gc_=False, **kw):
    return dict(name=name, kind="train", config=cfg, micro_batch=b, seq_len=s, optimizer=opt,
                grad_checkpointing=gc_, **kw)


CASES = [
    # 1. AdamW implementations, full fine-tuning, bf16 params.
    _train("adamw-fused-1b-b4s2048", M1B, 4, 2048, "adamw-fused"),
    _train("adamw-foreach-1b-b4s2048", M1B, 4, 2048, "adamw-foreach"),
    _train("adamw-forloop-1b-b4s2048", M1B, 4, 2048, "adamw-forloop"),
    _train("adamw-fused-7b-b1s2048", M7B, 1, 2048, "adamw-fused"),
    _train("adamw-foreach-7b-b1s2048", M7B, 1, 2048, "adamw-foreach"),
    _train("adamw-forloop-7b-b1s2048", M7B, 1, 2048, "adamw-forloop"),
    # 2. LoRA (PEFT) on the 7B, bf16 base, AdamW fused.
    *[_train(f"lora-7b-r{r}-{tn}{'-gc' if g else ''}-b4s2048", M7B, 4, 2048, "adamw-fused", g,
             lora={"r": r, "target_modules": tm})
      for g in (False, True) for r in (8, 64) for tn, tm in (("qv", QV), ("alllinear", "all-linear"))],
    # 4. Long context, 1B, batch 1.
    *[_train(f"longctx-1b-s{s // 1024}k{'-gc' if g else ''}", M1B, 1, s, "adamw-fused", g)
      for s in (16384, 32768) for g in (False, True)],
    # 5. generate(), greedy, 64 new tokens, KV cache on (generation_config.use_cache=True).
    *[{"name": f"generate-{m}-b{b}-p{p}", "kind": "generate", "config": cfg, "batch": b, "prompt_len": p,
       "new_tokens": 64, "use_cache": True} for m, cfg, p in (("7b", M7B, 1024), ("1b", M1B, 2048)) for b in (16, 32, 64)],
    # 3. bitsandbytes: 8-bit AdamW on full fine-tuning of the 1B, then QLoRA on the 7B.
    _train("bnb-adamw8bit-1b-b4s2048", M1B, 4, 2048, "bnb-adamw8bit"),
    _train("bnb-paged-adamw8bit-1b-b4s2048", M1B, 4, 2048, "bnb-paged-adamw8bit"),
    _train("qlora-7b-r64-alllinear-prep-b4s2048", M7B, 4, 2048, "adamw-fused", True,
           lora={"r": 64, "target_modules": "all-linear"}, quant="nf4", prepare_kbit=True),
    _train("qlora-7b-r64-alllinear-noprep-b4s2048", M7B, 4, 2048, "adamw-fused", False,
           lora={"r": 64, "target_modules": "all-linear"}, quant="nf4", prepare_kbit=False),
    _train("qlora-7b-r64-alllinear-noprep-gc-b4s2048", M7B, 4, 2048, "adamw-fused", True,
           lora={"r": 64, "target_modules": "all-linear"}, quant="nf4", prepare_kbit=False),
    _train("qlora-7b-r8-qv-prep-b4s2048", M7B, 4, 2048, "adamw-fused", True,
           lora={"r": 8, "target_modules": QV}, quant="nf4", prepare_kbit=True),
    _train("qlora-7b-r64-alllinear-prep-frompretrained-b4s2048", M7B, 4, 2048, "adamw-fused", True,
           lora={"r": 64, "target_modules": "all-linear"}, quant="nf4-from_pretrained", prepare_kbit=True,
           min_budget_s=150),
    # generate() with use_cache=False: every new token recomputes the whole sequence (slow; last).
    *[{"name": f"generate-{m}-b{b}-p{p}-nocache", "kind": "generate", "config": cfg, "batch": b, "prompt_len": p,
       "new_tokens": 64, "use_cache": False} for m, cfg, p in (("7b", M7B, 1024), ("1b", M1B, 2048)) for b in (16, 32, 64)],
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def hf_config(cfg_name):
    with open(os.path.join(CONFIG_DIR, cfg_name + ".json")) as f:
        return json.load(f)


def build_model(torch, cfg_name):
    from transformers import AutoConfig, AutoModelForCausalLM

    d = dict(hf_config(cfg_name))
    mt = d.pop("model_type")
    cfg = AutoConfig.for_model(mt, **d)
    cfg.use_cache = False
    with torch.device(DEV):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa")
    model.train()
    return model, cfg


def bnb_4bit_kwargs(torch):
    return {"compress_statistics": True, "quant_type": "nf4", "quant_storage": torch.uint8}


def quantize_nf4_inplace(torch, model):
    """Replace every nn.Linear but lm_head with bnb.nn.Linear4bit (nf4, double quant, bf16 compute)."""
    import bitsandbytes as bnb

    n = 0
    for _pname, parent in list(model.named_modules()):
        for cname, child in list(parent.named_children()):
            if type(child) is torch.nn.Linear and cname != "lm_head":
                new = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                        compute_dtype=torch.bfloat16, device="meta", **bnb_4bit_kwargs(torch))
                w = bnb.nn.Params4bit(child.weight.data, requires_grad=False, module=new,
                                      **bnb_4bit_kwargs(torch)).to(DEV)
                new._parameters["weight"] = w
                if child.bias is not None:
                    new.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
                setattr(parent, cname, new)
                del child, w
                n += 1
    model.is_loaded_in_4bit = True
    gc.collect()
    torch.cuda.empty_cache()
    return n


def load_nf4_from_pretrained(torch, cfg_name, rec):
    """How users load QLoRA: save random bf16 weights, from_pretrained with a BitsAndBytesConfig."""
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    tmp = tempfile.mkdtemp(prefix="qlora_", dir=os.environ.get("QLORA_TMP", "/tmp"))
    try:
        model, cfg = build_model(torch, cfg_name)
        t0 = time.perf_counter()
        model.save_pretrained(tmp)
        rec["save_s"] = round(time.perf_counter() - t0, 2)
        del model
        gc.collect()
        torch.cuda.empty_cache()
        q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                               bnb_4bit_compute_dtype=torch.bfloat16)
        t0 = time.perf_counter()
        model = AutoModelForCausalLM.from_pretrained(tmp, quantization_config=q, dtype=torch.bfloat16,
                                                     device_map={"": 0}, attn_implementation="sdpa")
        rec["load_s"] = round(time.perf_counter() - t0, 2)
        model.config.use_cache = False
        model.train()
        return model, cfg
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def make_optimizer(torch, name, params):
    lr = 1e-5
    if name == "adamw-fused":
        return torch.optim.AdamW(params, lr=lr, fused=True)
    if name == "adamw-foreach":
        return torch.optim.AdamW(params, lr=lr, foreach=True)
    if name == "adamw-forloop":
        return torch.optim.AdamW(params, lr=lr, foreach=False, fused=False)
    import bitsandbytes as bnb

    if name == "bnb-adamw8bit":
        return bnb.optim.AdamW8bit(params, lr=lr)
    if name == "bnb-paged-adamw8bit":
        return bnb.optim.PagedAdamW8bit(params, lr=lr)
    raise ValueError(name)


def dtype_counts(params):
    out = {}
    for p in params:
        k = f"{type(p).__name__}:{str(p.dtype).replace('torch.', '')}"
        out[k] = out.get(k, 0) + p.numel()
    return out


def device_used(torch):
    free, total = torch.cuda.mem_get_info()
    return total - free


def train_case(torch, case, steps, base_bytes):
    rec = {k: v for k, v in case.items() if k not in ("kind", "min_budget_s")}
    rec.update(recipe="bf16", attention="sdpa")
    t0 = time.perf_counter()
    quant = case.get("quant")
    if quant == "nf4-from_pretrained":
        model, cfg = load_nf4_from_pretrained(torch, case["config"], rec)
        rec["quantization"] = ("from_pretrained(quantization_config=BitsAndBytesConfig(load_in_4bit=True, "
                               "bnb_4bit_quant_type='nf4', bnb_4bit_use_double_quant=True, "
                               "bnb_4bit_compute_dtype=torch.bfloat16))")
    else:
        model, cfg = build_model(torch, case["config"])
        if quant == "nf4":
            rec["linear4bit_layers"] = quantize_nf4_inplace(torch, model)
            rec["quantization"] = ("from_config(bf16) then Linear -> bnb.nn.Linear4bit(nf4, compress_statistics=True, "
                                   "compute_dtype=bf16, quant_storage=uint8), lm_head kept bf16")
    rec["model_class"] = type(model).__name__
    rec["params"] = sum(p.numel() for p in model.parameters())
    if quant:
        import bitsandbytes as bnb

        rec["params_4bit_packed_elems"] = sum(p.numel() for p in model.parameters() if isinstance(p, bnb.nn.Params4bit))
    lora = case.get("lora")
    if quant and case.get("prepare_kbit"):
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model)  # default use_gradient_checkpointing=True
        rec["prepare_model_for_kbit_training"] = "prepare_model_for_kbit_training(model) (defaults)"
    elif case.get("grad_checkpointing"):
        model.gradient_checkpointing_enable()
        if lora:
            model.enable_input_require_grads()
    if lora:
        from peft import LoraConfig, get_peft_model

        lcfg = LoraConfig(r=lora["r"], target_modules=lora["target_modules"], task_type="CAUSAL_LM")
        model = get_peft_model(model, lcfg)
        d = lcfg.to_dict()
        rec["lora_config"] = {k: d[k] for k in ("r", "lora_alpha", "lora_dropout", "bias", "use_dora",
                                                "use_rslora", "init_lora_weights") if k in d}
        tm = d.get("target_modules")
        tm = sorted(tm) if isinstance(tm, (set, list, tuple)) else [tm]
        rec["lora_config"]["target_modules_requested"] = lora["target_modules"]
        rec["lora_config"]["target_modules_resolved"] = sorted({t.split(".")[-1] for t in tm})
        rec["lora_layers"] = sum(1 for n, _ in model.named_modules() if n.endswith(".lora_A"))
    rec["is_gradient_checkpointing"] = bool(getattr(model, "is_gradient_checkpointing", False))
    torch.cuda.synchronize()
    rec["build_s"] = round(time.perf_counter() - t0, 3)
    params = [p for p in model.parameters() if p.requires_grad]
    rec["trainable_params"] = sum(p.numel() for p in params)
    rec["trainable_dtypes"] = dtype_counts(params)
    rec["frozen_dtypes"] = dtype_counts(p for p in model.parameters() if not p.requires_grad)
    rec["params_bytes"] = torch.cuda.memory_allocated() - base_bytes
    opt = make_optimizer(torch, case["optimizer"], params)
    rec["optimizer_class"] = f"{type(opt).__module__}.{type(opt).__name__}"
    rec["optimizer_defaults"] = {k: v for k, v in opt.defaults.items()
                                 if isinstance(v, (bool, int, float, str, type(None)))}
    vocab = cfg.vocab_size
    g = torch.Generator(device=DEV).manual_seed(0)
    ids = torch.randint(0, vocab, (case["micro_batch"], case["seq_len"]), device=DEV, generator=g)
    labels = ids.clone()
    alloc, peak, reset = torch.cuda.memory_allocated, torch.cuda.max_memory_allocated, torch.cuda.reset_peak_memory_stats
    out = []
    for _ in range(steps):
        ph = {}
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        torch.cuda.synchronize()
        ph["start_bytes"] = alloc() - base_bytes
        reset()
        ev[0].record()
        loss = model(input_ids=ids, labels=labels).loss
        ev[1].record()
        torch.cuda.synchronize()
        ph["fwd_peak_bytes"], ph["after_fwd_bytes"] = peak() - base_bytes, alloc() - base_bytes
        reset()
        loss.backward()
        ev[2].record()
        torch.cuda.synchronize()
        ph["bwd_peak_bytes"], ph["after_bwd_bytes"] = peak() - base_bytes, alloc() - base_bytes
        reset()
        opt.step()
        ev[3].record()
        torch.cuda.synchronize()
        ph["opt_peak_bytes"], ph["after_opt_bytes"] = peak() - base_bytes, alloc() - base_bytes
        ph["device_used_bytes"] = device_used(torch)
        opt.zero_grad(set_to_none=True)
        ph["fwd_ms"], ph["bwd_ms"] = ev[0].elapsed_time(ev[1]), ev[1].elapsed_time(ev[2])
        ph["opt_ms"], ph["step_ms"] = ev[2].elapsed_time(ev[3]), ev[0].elapsed_time(ev[3])
        ph["loss"] = float(loss.item())
        del loss
        out.append(ph)
    rec["steps"] = out
    rec["peak_bytes"] = max(max(p["fwd_peak_bytes"], p["bwd_peak_bytes"], p["opt_peak_bytes"]) for p in out)
    timed = out[2:] or out
    for k in ("step_ms", "fwd_ms", "bwd_ms", "opt_ms"):
        rec[k + "_median"] = statistics.median(p[k] for p in timed)
    rec["step_ms_spread"] = [min(p["step_ms"] for p in timed), max(p["step_ms"] for p in timed)]
    rec["max_reserved_bytes"] = torch.cuda.max_memory_reserved()
    rec["device_used_bytes_max"] = max(p["device_used_bytes"] for p in out)
    rec["tokens_per_s"] = case["micro_batch"] * case["seq_len"] / (rec["step_ms_median"] / 1e3)
    rec["status"] = "ok"
    del opt, ids, labels, params, model
    return rec


def _kernel_us(torch, fn):
    """Sum of GPU kernel/memcpy time (us) recorded by the profiler while fn runs."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    tot = 0.0
    for e in prof.key_averages():
        if str(getattr(e, "device_type", "")).endswith("CUDA"):
            tot += getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0) or 0
    return tot


def generate_case(torch, case, base_bytes):
    rec = {k: v for k, v in case.items() if k != "kind"}
    rec.update(recipe="bf16", attention="sdpa", decoding="greedy (do_sample=False)")
    model, cfg = build_model(torch, case["config"])
    model.eval()
    model.config.use_cache = True
    gcfg = model.generation_config
    gcfg.eos_token_id = None  # random weights: never stop early, always max_new_tokens
    gcfg.pad_token_id = 0
    gcfg.use_cache = case["use_cache"]  # the model was built with config.use_cache=False (training)
    b, p, new = case["batch"], case["prompt_len"], case["new_tokens"]
    ids = torch.randint(0, cfg.vocab_size, (b, p), device=DEV)
    mask = torch.ones_like(ids)
    torch.cuda.synchronize()
    rec["weights_bytes"] = torch.cuda.memory_allocated() - base_bytes
    rec["call"] = (f"model.generate(input_ids, attention_mask=mask, max_new_tokens={new}, do_sample=False) with "
                   f"generation_config.use_cache={gcfg.use_cache}, eos_token_id=None, pad_token_id=0")

    def gen(n):
        return model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=n, do_sample=False)

    def timed(n):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        w0 = time.perf_counter()
        e0.record()
        o = gen(n)
        e1.record()
        torch.cuda.synchronize()
        return o, e0.elapsed_time(e1), (time.perf_counter() - w0) * 1e3

    with torch.inference_mode():
        gen(4)  # warm-up
        _, t1, rec["prefill_plus_1tok_wall_ms"] = timed(1)
        torch.cuda.reset_peak_memory_stats()
        out, tn, wn = timed(new)
        rec["peak_bytes"] = torch.cuda.max_memory_allocated() - base_bytes
        rec["device_used_bytes"] = device_used(torch)
        rec["generated_tokens"] = int(out.shape[1] - p)
        rec["prefill_plus_1tok_ms"] = t1
        rec["generate_ms"] = tn
        rec["generate_wall_ms"] = wn
        rec["decode_ms_per_token"] = (tn - t1) / max(1, rec["generated_tokens"] - 1)
        rec["step_ms_median"] = rec["decode_ms_per_token"]
        rec["tokens_per_s"] = b * rec["generated_tokens"] / (tn / 1e3)
        del out
        # Memory-bound floor of one decode step: read all weights and the KV cache once (4.3 TB/s copy rate).
        kv_per_tok = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * (cfg.hidden_size // cfg.num_attention_heads) * 2
        kv_mid = kv_per_tok * b * (p + new / 2)
        rec["kv_bytes_per_token"] = kv_per_tok
        rec["decode_floor_ms_per_token"] = (rec["weights_bytes"] + kv_mid) / 4.3e12 * 1e3
        try:
            k1 = _kernel_us(torch, lambda: gen(1))
            k9 = _kernel_us(torch, lambda: gen(9))
            rec["gpu_kernel_ms_per_decode_token"] = (k9 - k1) / 8 / 1e3
            rec["gpu_busy_fraction_decode"] = rec["gpu_kernel_ms_per_decode_token"] / rec["decode_ms_per_token"]
            rec["cpu_bound"] = rec["gpu_busy_fraction_decode"] < 0.6
        except Exception as e:  # noqa: BLE001
            rec["profiler_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    rec["status"] = "ok"
    model = ids = mask = None
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="finetune_runs.json")
    ap.add_argument("--cases", default="all")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=500.0, help="start no new case after this")
    ap.add_argument("--merge", default="", help="earlier results file: keep its cases not rerun here")
    args = ap.parse_args(argv)
    t_start = time.time()
    deadline = t_start + args.budget_s

    import torch
    import transformers

    info = {"command": command_line(),
            "torch": torch.__version__, "cuda": torch.version.cuda, "transformers": transformers.__version__,
            "python": platform.python_version(), "date": time.strftime("%Y-%m-%d"),
            "device": torch.cuda.get_device_name(0), "steps": args.steps,
            "timing": "CUDA events; step/phase ms = median of steps after the first two"}
    if os.environ.get("FINETUNE_RUNS_SETUP"):
        info["setup"] = os.environ["FINETUNE_RUNS_SETUP"]
    try:
        import peft

        info["peft"] = peft.__version__
    except Exception as e:  # noqa: BLE001
        info["peft"] = f"import failed: {type(e).__name__}: {e}"
    try:
        import bitsandbytes as bnb

        info["bitsandbytes"] = bnb.__version__
        have_bnb = True
    except Exception as e:  # noqa: BLE001
        info["bitsandbytes"] = f"import failed: {type(e).__name__}: {str(e)[:300]}"
        have_bnb = False
    free, total = torch.cuda.mem_get_info()
    info["gpu_total_bytes"], info["gpu_free_bytes_at_start"] = total, free
    a = torch.randn(256, 256, device=DEV, dtype=torch.bfloat16)
    (a @ a).sum().item()
    a32 = a.float()
    (a32 @ a32).sum().item()
    del a, a32
    torch.cuda.synchronize()
    base_bytes = torch.cuda.memory_allocated()
    info["workspace_bytes_after_warmup"] = base_bytes
    result = {"info": info, "cases": []}
    if args.merge and os.path.exists(args.merge):
        with open(args.merge) as f:
            old = json.load(f)
        result["merged_from"] = {"command": old["info"].get("command"), "date": old["info"].get("date")}
        result["cases"] = old["cases"]

    order = {c["name"]: i for i, c in enumerate(CASES)}

    def save():
        info["wall_s"] = round(time.time() - t_start, 1)
        result["cases"].sort(key=lambda c: order.get(c["name"], len(order)))
        write_json(args.out, result)

    def put(rec):
        result["cases"] = [c for c in result["cases"] if c["name"] != rec["name"]] + [rec]

    wanted = None if args.cases == "all" else set(args.cases.split(","))
    for case in CASES:
        if wanted and case["name"] not in wanted:
            continue
        settings = {k: v for k, v in case.items() if k not in ("kind", "min_budget_s")}
        left = deadline - time.time()
        if left < case.get("min_budget_s", 0) or left <= 0:
            put({**settings, "status": "skipped", "error": f"time budget ({left:.0f} s left)"})
            save()
            continue
        needs_bnb = case.get("quant") or case.get("optimizer", "").startswith("bnb-")
        if needs_bnb and not have_bnb:
            put({**settings, "status": "skipped", "error": "bitsandbytes " + info["bitsandbytes"]})
            save()
            continue
        log("case", case["name"], f"({time.time() - t_start:.0f} s)")
        t0 = time.time()
        err = None
        try:
            torch.cuda.reset_peak_memory_stats()
            rec = (generate_case(torch, case, base_bytes) if case["kind"] == "generate"
                   else train_case(torch, case, args.steps, base_bytes))
        except torch.cuda.OutOfMemoryError as e:
            err = {"status": "oom", "error": f"OutOfMemoryError: {str(e)[:400]}",
                   "max_allocated_bytes_at_oom": torch.cuda.max_memory_allocated() - base_bytes}
        except Exception as e:  # noqa: BLE001 - a failed case is data, keep going
            err = {"status": "error", "error": f"{type(e).__name__}: {str(e)[:400]}",
                   "traceback_tail": traceback.format_exc()[-1500:]}
        if err:
            rec = {**settings, **err}
            log("  failed:", err["error"][:300])
        rec["case_wall_s"] = round(time.time() - t0, 1)
        gc.collect()
        torch.cuda.empty_cache()
        if rec["status"] == "ok":
            log(f"  peak {rec['peak_bytes'] / 1e9:.2f} GB  step {rec.get('step_ms_median', 0):.1f} ms  "
                f"({rec['case_wall_s']} s)")
        put(rec)
        save()
    save()
    for rec in result["cases"]:
        if rec["status"] == "ok":
            print(f"{rec['name']:52s} peak {rec['peak_bytes'] / 1e9:8.2f} GB  step {rec['step_ms_median']:9.1f} ms")
        else:
            print(f"{rec['name']:52s} {rec['status'].upper()}: {rec.get('error', '')[:120]}")


if __name__ == "__main__":
    main()
