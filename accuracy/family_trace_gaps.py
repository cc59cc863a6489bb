"""The engine's layer traces of the imported families against one layer measured on an H200.

benchmarks/gpu/gpu_family_layers.py measured one layer's saved activations per token on an H200
(tests/data/family_layers_h200.json: the growth of ``memory_allocated`` over a training forward,
4 layers less 2, per layer and token, bf16, micro-batch 1). This prints the engine's number for
the same case (core/models/layers_families.py, core/models/layers_hf.py), its error, and what the trace models
for that family (the rules, read off transformers 5.x's modeling files and autograd's saving
rules, are cited in core/models/layers_families.py). tests/unit/test_family_traces.py asserts every
case within 5%.

    python -m accuracy.family_trace_gaps
"""
import json
import os

from planner_app.core.models.hf_config import load_hf_config
from planner_app.core.models.trace import EXP, SEQ, TP, TPS
from planner_app.core.training.activations import model_profiles, window_mask

HERE = os.path.dirname(os.path.abspath(__file__))
HF = os.path.join(HERE, "..", "tests", "data", "hf_configs")
MEASURED = os.path.join(HERE, "..", "tests", "data", "family_layers_h200.json")

# what the trace models beyond a Llama (or GPT-2) layer, per measured case
MODELLED = {
    "llama-3.2-1b": "the Llama trace itself (control; unchanged, the golden file's)",
    "qwen3-0.6b": "q_norm/k_norm over head_dim: rsqrt per head",
    "qwen3-30b-a3b": "per-head QK-norm; router softmax over every expert in fp32",
    "gemma-3-1b": "4 Gemma norms multiplying by (1 + w) in fp32, Gemma per-head QK-norm; the window's mask "
                  "bias kept per layer",
    "gemma-2-2b": "4 Gemma norms; eager soft-cap (tanh saves its output)",
    "gemma-7b": "Gemma norms multiplying in fp32",
    "glm-4-9b-0414": "sandwich post-norms; fused gate_up_proj; partial rotary's cat (output copied)",
    "olmo-2-7b": "post-norms only, multiplying in fp32; full-width QK-norm",
    "qwen2-57b-a14b": "shared expert and its sigmoid gate",
    "gpt-oss-20b": "fp32-weight norms; sinks (row max indices, bf16 softmax); top-k-then-softmax router; "
                   "clamped SwiGLU",
    "gpt-neox-20b": "parallel block; fused QKV views; cat rotary (output copied); gelu_fast (7 saved tensors)",
    "pythia-1b": "parallel block; fused QKV views; cat rotary (output copied); exact GELU",
    "falcon-7b": "one shared LayerNorm; q/k/v copies; multi-query SDPA on the math path (fp32 scores)",
    "falcon-7b-eager": "one shared LayerNorm; q/k/v copies; bf16 softmax, k/v broadcast by matmul",
    "falcon-40b": "two LayerNorms; K/V broadcast to every head and copied",
    "phi-3-mini-4k": "fused qkv_proj (v's view keeps q and k alive), gate_up_proj; cat rotary (output copied); "
                     "mask bias (s = window: transformers 5.17 seems to build no mask here)",
}


def engine_layer_bytes(m, attention, seq):
    """One layer's saved bytes per token in the engine's trace (bf16, no recomputation)."""
    p = model_profiles(m, "lp", 2, attention, "pytorch", bool(window_mask(m, seq)), False, False)
    prof = p.moe if p.moe is not None else p.dense
    s = prof.saved
    return float(s[SEQ] + s[TP] + s[EXP] + s[TPS] * seq)


def cases():
    """(name, measured record, engine bytes per token) of every measured case."""
    with open(MEASURED) as f:
        measured = json.load(f)
    out = []
    for name, r in measured["cases"].items():
        m = load_hf_config(os.path.join(HF, name.replace("-eager", "") + ".json"))
        out.append((name, r, engine_layer_bytes(m, r["attention"], r["seq_len"])))
    return measured, out


def main():
    measured, rows = cases()
    print(f"one layer's saved activations, bytes per token: measured on {measured['device']} "
          f"(transformers {measured['transformers']}, bf16, micro-batch 1) against the engine")
    print(f"{'case':16s} {'attn':5s} {'seq':>5s} {'measured':>10s} {'engine':>10s} {'error':>7s}  "
          "what the trace models")
    for name, r, engine in rows:
        meas = r["layer_saved_bytes_per_token"]
        print(f"{name:16s} {r['attention']:5s} {r['seq_len']:5d} {meas:10,.0f} {engine:10,.0f} "
              f"{engine / meas - 1:+7.1%}  {MODELLED.get(name, '')}")


if __name__ == "__main__":
    main()
