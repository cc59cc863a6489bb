"""Kernel-level profiles of a few training steps, a census of saved tensors, and ResNet-50
activation memory, on the GPU machine. Feeds the engine's time and memory models::

    python -m benchmarks.gpu.gpu_profile_cases --out profiles_h200.json
"""
import argparse
import collections
import gc
import json
import os
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG_DIR = os.path.join(HERE, "..", "..", "tests", "data", "hf_configs")

PROFILE_CASES = [
    ("gpt2-bf16-sdpa-b16s1024", "gpt2", "bf16", "sdpa", "none", 16, 1024),
    ("gpt2-fp32-sdpa-b8s1024", "gpt2", "fp32", "sdpa", "none", 8, 1024),
    ("bert-base-amp-sdpa-b32s512", "bert-base-uncased", "amp-bf16", "sdpa", "none", 32, 512),
    ("llama7b-bf16-eager-full-b1s4096", "llama-2-7b", "bf16", "eager", "full", 1, 4096),
    ("mixtral-mini-bf16-sdpa-b4s2048", "mixtral-mini", "bf16", "sdpa", "none", 4, 2048),
    ("llama3b-bf16-sdpa-b2s4096", "llama-3.2-3b", "bf16", "sdpa", "none", 2, 4096),
]


def classify(name: str) -> str:
    n = name.lower()
    if any(k in n for k in ("gemm", "cutlass", "sm90_xmma", "nvjet", "ampere_", "cublas", "xmma", "_gemm")):
        return "gemm"
    if "flash" in n or "fmha" in n or "attention" in n or "efficient" in n:
        return "attention"
    if any(k in n for k in ("norm", "softmax", "reduce", "sum", "mean")):
        return "reduction"
    if "memcpy" in n or "memset" in n:
        return "memcpy"
    return "elementwise"


def profile_case(torch, case):
    from torch.profiler import ProfilerActivity, profile

    from planner_app.probe.validate import build_hf_model

    name, cfg, recipe, attn, rec, b, s = case
    with open(os.path.join(CONFIG_DIR, cfg + ".json")) as f:
        hf = json.load(f)
    model, vocab = build_hf_model(torch, hf, recipe, attn, "cuda")
    if rec == "full":
        model.gradient_checkpointing_enable()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ids = torch.randint(0, vocab, (b, s), device="cuda")
    amp = recipe.startswith("amp")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    by_cat = collections.Counter()
    counts = collections.Counter()
    top = []
    for ev in prof.key_averages():
        dev_us = getattr(ev, "device_time_total", None)
        if dev_us is None:
            dev_us = getattr(ev, "cuda_time_total", 0)
        if not dev_us or ev.key.startswith(("aten::", "autograd::", "Optimizer", "cudaLaunch", "ProfilerStep")):
            continue
        cat = classify(ev.key)
        by_cat[cat] += dev_us
        counts[cat] += ev.count
        top.append((dev_us, ev.count, ev.key[:120], cat))
    top.sort(reverse=True)
    model = opt = ids = None  # drop the references (a closure above still names them)
    gc.collect()
    torch.cuda.empty_cache()
    return {"name": name, "wall_s": wall, "device_us_by_category": dict(by_cat), "kernels_by_category": dict(counts),
            "device_us_total": sum(by_cat.values()), "top_kernels": [
                {"us": u, "count": c, "name": n, "category": k} for u, c, n, k in top[:40]]}


def saved_tensor_census(torch, cfg, recipe, attn, b, s):
    """Unique storages autograd saves in one forward, grouped by shape and dtype."""
    from planner_app.probe.validate import build_hf_model

    with open(os.path.join(CONFIG_DIR, cfg + ".json")) as f:
        hf = json.load(f)
    model, vocab = build_hf_model(torch, hf, recipe, attn, "cuda")
    ids = torch.randint(0, vocab, (b, s), device="cuda")
    seen = {}

    def pack(t):
        st = t.untyped_storage()
        seen.setdefault(st.data_ptr(), (st.nbytes(), tuple(t.shape), str(t.dtype)))
        return t

    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=recipe.startswith("amp")):
            out = model(input_ids=ids, labels=ids)
            loss = out.loss
    torch.cuda.synchronize()
    held_with_output = torch.cuda.memory_allocated() - base
    logits_info = {"dtype": str(out.logits.dtype), "shape": list(out.logits.shape)}
    del out
    gc.collect()
    held = torch.cuda.memory_allocated() - base
    groups = collections.Counter()
    for nbytes, shape, dtype in seen.values():
        groups[(shape, dtype)] += nbytes
    rows = sorted(((v, list(k[0]), k[1]) for k, v in groups.items()), reverse=True)[:40]
    del loss
    model = ids = None  # drop the references (a closure above still names them)
    gc.collect()
    torch.cuda.empty_cache()
    return {"config": cfg, "recipe": recipe, "attention": attn, "batch": b, "seq": s,
            "saved_unique_bytes": sum(v[0] for v in seen.values()), "held_after_forward_bytes": held,
            "held_with_output_bytes": held_with_output, "logits": logits_info,
            "largest_saved": [{"bytes": v, "shape": sh, "dtype": dt} for v, sh, dt in rows]}


def resnet50(torch, recipe, batch):
    import torchvision

    m = torchvision.models.resnet50().cuda().train()
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    amp = recipe == "amp-bf16"
    res = {}
    for _step in range(4):
        torch.cuda.synchronize()
        start = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        t0 = torch.cuda.Event(enable_timing=True)
        t1 = torch.cuda.Event(enable_timing=True)
        t0.record()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = torch.nn.functional.cross_entropy(m(x), y)
        torch.cuda.synchronize()
        after_fwd = torch.cuda.memory_allocated()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        t1.record()
        torch.cuda.synchronize()
        res = {"recipe": recipe, "batch": batch, "start_bytes": start, "after_fwd_bytes": after_fwd,
               "activation_bytes_per_sample": (after_fwd - start) / batch,
               "peak_bytes": torch.cuda.max_memory_allocated(), "step_ms": t0.elapsed_time(t1),
               "params": sum(p.numel() for p in m.parameters())}
        del loss
    m = opt = x = y = None  # drop the references (a closure above still names them)
    gc.collect()
    torch.cuda.empty_cache()
    return res


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    import torch

    out = {"command": "python -m benchmarks.gpu.gpu_profile_cases", "device": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "profiles": [], "census": [], "resnet50": [], "errors": []}

    def save():
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)

    for case in PROFILE_CASES:
        try:
            out["profiles"].append(profile_case(torch, case))
        except Exception as e:  # noqa: BLE001
            out["errors"].append(f"profile {case[0]}: {type(e).__name__}: {str(e)[:200]}")
        save()
    for args_c in (("bert-base-uncased", "amp-bf16", "sdpa", 32, 512), ("gpt2", "amp-bf16", "sdpa", 8, 1024),
                   ("llama-3.2-1b", "amp-bf16", "sdpa", 4, 2048)):
        try:
            out["census"].append(saved_tensor_census(torch, *args_c))
        except Exception as e:  # noqa: BLE001
            out["errors"].append(f"census {args_c[0]}: {type(e).__name__}: {str(e)[:200]}")
        save()
    for recipe in ("fp32", "amp-bf16"):
        try:
            out["resnet50"].append(resnet50(torch, recipe, 64))
        except Exception as e:  # noqa: BLE001
            out["errors"].append(f"resnet50 {recipe}: {type(e).__name__}: {str(e)[:200]}")
        save()
    save()
    for p in out["profiles"]:
        print(p["name"], f"wall {p['wall_s'] * 1e3:.1f} ms", {k: round(v / 1e3, 1) for k, v in p["device_us_by_category"].items()})
    for c in out["census"]:
        print(c["config"], "saved", c["saved_unique_bytes"] / 1e9, "held", c["held_after_forward_bytes"] / 1e9)
    for r in out["resnet50"]:
        print("resnet50", r["recipe"], r["activation_bytes_per_sample"] / 1e6, "MB/sample", r["step_ms"], "ms")
    print(out["errors"])


if __name__ == "__main__":
    main()
