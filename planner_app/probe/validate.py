"""Real-run validation: train the planned model for a few steps with random weights and
measure peak memory (``torch.cuda.max_memory_allocated``) and step time (CUDA events,
median after warm-up). Hugging Face transformers builds the model when installed (no
download: ``from_config``); otherwise a small built-in GPT in plain PyTorch.

The loop is the one the engine's ``--framework pytorch`` models:
``loss = model(input_ids=x, labels=x).loss; loss.backward(); opt.step();
opt.zero_grad(set_to_none=True)``, AdamW with PyTorch's default (foreach) implementation,
``use_cache=False``, full recomputation through ``gradient_checkpointing_enable()``.
Runs inside the probe worker (``worker.py``) and in benchmarks/gpu/gpu_training_runs.py.
"""
from __future__ import annotations

import gc
import platform
import statistics
import time


def _torch():
    import torch  # lazy: torch is optional (probe backend)

    return torch


def build_hf_model(torch, hf_config: dict, recipe: str, attention: str, device):
    # lazy: transformers is optional (probe validation)
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM

    d = dict(hf_config)
    mt = d.pop("model_type")
    cfg = AutoConfig.for_model(mt, **d)
    cfg.use_cache = False
    cls = AutoModelForMaskedLM if mt == "bert" else AutoModelForCausalLM
    dtype = torch.bfloat16 if recipe == "bf16" else torch.float32
    with torch.device(device):
        model = cls.from_config(cfg, dtype=dtype, attn_implementation=attention)
    model.train()
    return model, cfg.vocab_size


def build_tiny_gpt(torch, hf_config: dict, recipe: str, device):
    """A GPT-2-shaped model in plain PyTorch (no transformers): learned positions,
    LayerNorm, fused QKV, SDPA, GELU (tanh) MLP, tied output layer."""
    nn, F = torch.nn, torch.nn.functional
    h, L, a = hf_config["n_embd"], hf_config["n_layer"], hf_config["n_head"]
    V, P, ff = hf_config["vocab_size"], hf_config["n_positions"], hf_config.get("n_inner") or 4 * hf_config["n_embd"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(h), nn.LayerNorm(h)
            self.c_attn, self.c_proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
            self.c_fc, self.mlp_proj = nn.Linear(h, ff), nn.Linear(ff, h)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
            q, k, v = (t.view(b, s, a, h // a).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, h)
            x = x + self.c_proj(y)
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class TinyGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(V, h), nn.Embedding(P, h)
            self.blocks = nn.ModuleList(Block() for _ in range(L))
            self.ln_f = nn.LayerNorm(h)

        def forward(self, input_ids, labels):
            s = input_ids.shape[1]
            x = self.wte(input_ids) + self.wpe(torch.arange(s, device=input_ids.device))
            for blk in self.blocks:
                x = blk(x)
            logits = F.linear(self.ln_f(x), self.wte.weight)
            loss = F.cross_entropy(logits.float().view(-1, V), labels.view(-1))
            return type("Out", (), {"loss": loss})()

    dtype = torch.bfloat16 if recipe == "bf16" else torch.float32
    with torch.device(device):
        model = TinyGPT().to(dtype)
    model.train()
    return model, V


def train_steps(torch, model, vocab: int, recipe: str, micro_batch: int, seq_len: int, optimizer: str,
                recompute: str, steps: int, device: str = "cuda", progress=None) -> dict:
    """Run ``steps`` training steps; per-phase peaks (relative to the start) and timings."""
    cuda = device == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    alloc = torch.cuda.memory_allocated if cuda else (lambda: 0)
    peak = torch.cuda.max_memory_allocated if cuda else (lambda: 0)
    reset = torch.cuda.reset_peak_memory_stats if cuda else (lambda: None)
    if recompute == "full":
        model.gradient_checkpointing_enable()
    if optimizer == "sgd-momentum":
        opt = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    g = torch.Generator(device=device).manual_seed(0)
    ids = torch.randint(0, vocab, (micro_batch, seq_len), device=device, generator=g)
    labels = ids.clone()
    amp = recipe.startswith("amp-")
    amp_dtype = torch.float16 if recipe == "amp-fp16" else torch.bfloat16
    out = {"steps": []}
    for step in range(steps):
        ph = {}
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)] if cuda else None
        sync()
        ph["start_bytes"] = alloc()
        reset()
        if cuda:
            ev[0].record()
        with torch.autocast(device_type=device, dtype=amp_dtype, enabled=amp):
            loss = model(input_ids=ids, labels=labels).loss
        if cuda:
            ev[1].record()
        sync()
        ph["fwd_peak_bytes"], ph["after_fwd_bytes"] = peak(), alloc()
        reset()
        loss.backward()
        if cuda:
            ev[2].record()
        sync()
        ph["bwd_peak_bytes"], ph["after_bwd_bytes"] = peak(), alloc()
        reset()
        opt.step()
        if cuda:
            ev[3].record()
        sync()
        ph["opt_peak_bytes"], ph["after_opt_bytes"] = peak(), alloc()
        opt.zero_grad(set_to_none=True)
        if cuda:
            ph["fwd_ms"], ph["bwd_ms"] = ev[0].elapsed_time(ev[1]), ev[1].elapsed_time(ev[2])
            ph["opt_ms"], ph["step_ms"] = ev[2].elapsed_time(ev[3]), ev[0].elapsed_time(ev[3])
        ph["loss"] = float(loss.item())
        del loss
        out["steps"].append(ph)
        if progress:
            progress((step + 1) / steps, f"step {step + 1}/{steps}")
    out["peak_abs_bytes"] = max(max(s["fwd_peak_bytes"], s["bwd_peak_bytes"], s["opt_peak_bytes"])
                                for s in out["steps"])
    if cuda:
        timed = [s["step_ms"] for s in out["steps"][2:]] or [s["step_ms"] for s in out["steps"]]
        out["step_ms_median"] = statistics.median(timed)
        out["step_ms_spread"] = [min(timed), max(timed)]
        out["max_reserved_bytes"] = torch.cuda.max_memory_reserved()
    del opt, ids, labels
    return out


def run_validation(args: dict, progress=None) -> dict:
    """Worker task: args = {hf_config, recipe, attention, recompute, micro_batch, seq_len,
    optimizer, steps}. Returns what was measured (absolute max_memory_allocated)."""
    torch = _torch()
    if not torch.cuda.is_available():
        raise RuntimeError("real-run validation needs a CUDA (or ROCm) GPU visible to torch")
    device = "cuda"
    a = torch.randn(256, 256, device=device)
    (a @ a).sum().item()  # cuBLAS workspaces exist in any real job
    del a
    try:
        # lazy: transformers is optional (probe validation)
        import transformers  # noqa: F401

        use_hf = True
    except ImportError:
        use_hf = False
    recipe = args.get("recipe", "bf16")
    t0 = time.perf_counter()
    if use_hf:
        model, vocab = build_hf_model(torch, args["hf_config"], recipe, args.get("attention", "sdpa"), device)
        impl = "transformers " + __import__("transformers").__version__
    else:
        if args["hf_config"].get("model_type") != "gpt2":
            raise RuntimeError("transformers is not installed: only GPT-2-shaped models can run on the built-in GPT")
        model, vocab = build_tiny_gpt(torch, args["hf_config"], recipe, device)
        impl = "built-in GPT (plain PyTorch)"
    n_params = sum(p.numel() for p in model.parameters())
    build_s = time.perf_counter() - t0
    try:
        res = train_steps(torch, model, vocab, recipe, int(args.get("micro_batch", 1)), int(args.get("seq_len", 512)),
                          args.get("optimizer", "adamw"), args.get("recompute", "none"), int(args.get("steps", 5)),
                          device, progress)
    except torch.cuda.OutOfMemoryError as e:
        res = {"oom": True, "error": str(e)[:300]}
    del model
    gc.collect()
    torch.cuda.empty_cache()
    res.update(implementation=impl, params=n_params, build_s=build_s, device=torch.cuda.get_device_name(0),
               torch=torch.__version__, python=platform.python_version())
    return res
