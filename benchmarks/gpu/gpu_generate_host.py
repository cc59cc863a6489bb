"""Where Hugging Face ``model.generate()``'s decode time goes on a local GPU: the per-token time
against the number of layers (the host's cost per layer and per token), and a cProfile of the
host side of one call.

The fine-tuning runs (tests/data/finetune_runs_h200.json, ``generate-*``) took 51-73 ms per decode
token for 1B and 7B Llama models at batch 16-64 with the GPU busy 6-42% of it: the host bounds it.
This measures why: Llama-3.2-1B's widths with 2, 8 and 16 layers (random bf16 weights, SDPA,
greedy, KV cache on, eos disabled), per-token time = (t(n new tokens) - t(1)) / (n - 1) with the
GPU synchronised; then Python's cProfile over one generate() call of the 16-layer model, the 40
functions of most own time.

    python -m benchmarks.gpu.gpu_generate_host --out generate_host.json
    python -m benchmarks.gpu.gpu_generate_host --cases --out generate_warm.json

``--cases`` re-times the six ``generate-*`` cases of tests/data/finetune_runs_h200.json (Llama-2-7B
at batch 16/32/64 with 1,024-token prompts, Llama-3.2-1B at 16/32/64 with 2,048, 64 new tokens):
the first call after a 4-token warm-up (as those runs timed it) and the faster of two more calls.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import sys
import time

from benchmarks.gpu import gpu_finetune_runs as base
from benchmarks.gpu.bench_io import command_line, write_json  # all-or-nothing JSON write

CASES = [("llama-2-7b", 16, 1024), ("llama-2-7b", 32, 1024), ("llama-2-7b", 64, 1024),
         ("llama-3.2-1b", 16, 2048), ("llama-3.2-1b", 32, 2048), ("llama-3.2-1b", 64, 2048)]


def build(torch, layers, config="llama-3.2-1b", changes=None):
    """A config of tests/data/hf_configs with random bf16 weights on the GPU, SDPA, ready for greedy
    generate() (eos disabled, KV cache on); ``layers``: keep that many (0: all), per-layer lists cut to
    match; ``changes``: other config fields to override."""
    from transformers import AutoConfig, AutoModelForCausalLM

    d = dict(base.hf_config(config))
    d.update(changes or {})
    if layers:
        d["num_hidden_layers"] = layers
        if "layer_types" in d:
            d["layer_types"] = d["layer_types"][:layers]
        if "max_window_layers" in d:
            d["max_window_layers"] = min(d["max_window_layers"], layers)
    mt = d.pop("model_type")
    cfg = AutoConfig.for_model(mt, **d)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa")
    model.eval()
    g = model.generation_config
    g.eos_token_id = None
    g.pad_token_id = 0
    g.use_cache = True
    return model, cfg


def generate(model, ids, new_tokens: int):
    """Greedy generate() of ``new_tokens`` after the prompt ``ids`` (an all-ones attention mask)."""
    return model.generate(input_ids=ids, attention_mask=ids.new_ones(ids.shape), max_new_tokens=new_tokens,
                          do_sample=False)


def generate_ms(torch, model, ids, new_tokens: int) -> float:
    """Wall milliseconds of one generate() call, the GPU synchronised before and after."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    generate(model, ids, new_tokens)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def run_cases(torch):
    """The six generate() cases: the first 64-token call and the faster of two more."""
    res, built = [], {}
    for config, b, p in CASES:
        if config not in built:
            built.clear()
            torch.cuda.empty_cache()
            built[config] = build(torch, 0, config)
        model, cfg = built[config]
        ids = torch.randint(0, cfg.vocab_size, (b, p), device="cuda")

        def timed(n):
            return generate_ms(torch, model, ids, n)

        with torch.inference_mode():
            timed(4)
            t1_first = timed(1)
            first = timed(64)
            t1 = min(timed(1), t1_first)
            warm = min(timed(64), timed(64))
        rec = {"config": config, "batch": b, "prompt_len": p, "new_tokens": 64,
               "first_call_ms_per_token": (first - t1_first) / 63, "warm_ms_per_token": (warm - t1) / 63,
               "t1_ms": t1, "t64_first_ms": first, "t64_warm_ms": warm}
        print(rec, file=sys.stderr, flush=True)
        res.append(rec)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="generate_host.json")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--prompt", type=int, default=1024)
    ap.add_argument("--new", type=int, default=33)
    ap.add_argument("--cases", action="store_true")
    args = ap.parse_args()
    import torch
    import transformers

    info = {"command": command_line(), "torch": torch.__version__,
            "transformers": transformers.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
            "cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count()}
    out = {"info": info, "points": []}
    if args.cases:
        out["cases"] = run_cases(torch)
        write_json(args.out, out)
        return
    for layers in (2, 8, 16):
        model, cfg = build(torch, layers)
        ids = torch.randint(0, cfg.vocab_size, (args.batch, args.prompt), device="cuda")

        def gen(n):
            return generate(model, ids, n)

        def timed(n):
            return generate_ms(torch, model, ids, n)

        with torch.inference_mode():
            gen(4)
            t1 = min(timed(1) for _ in range(2))
            tn = min(timed(args.new) for _ in range(2))
            rec = {"layers": layers, "batch": args.batch, "prompt": args.prompt, "new_tokens": args.new,
                   "t1_ms": t1, "tn_ms": tn, "decode_ms_per_token": (tn - t1) / (args.new - 1)}
            if layers == 16:
                pr = cProfile.Profile()
                pr.enable()
                gen(9)
                torch.cuda.synchronize()
                pr.disable()
                s = io.StringIO()
                st = pstats.Stats(pr, stream=s)
                st.sort_stats("tottime").print_stats(40)
                rec["cprofile_tottime_9_tokens"] = s.getvalue()[-12000:]
                s = io.StringIO()
                pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(40)
                rec["cprofile_cumtime_9_tokens"] = s.getvalue()[-12000:]
        print(f"layers {layers}: {rec['decode_ms_per_token']:.2f} ms per token", file=sys.stderr, flush=True)
        out["points"].append(rec)
        model = None  # drop the references (a closure above still names them)
        torch.cuda.empty_cache()
    write_json(args.out, out)


if __name__ == "__main__":
    main()
