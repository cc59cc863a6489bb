"""Measure what one layer of each model family keeps for backward, on a GPU.

Each case is the architecture of a config in tests/data/hf_configs/ (its real widths, written
out here so the script runs on its own), cut to 2 and to 4 layers, built in bf16 with random
weights on the GPU and run forward in training mode with labels
(``loss = model(input_ids=x, labels=x).loss``, ``use_cache=False``). The growth of
``torch.cuda.memory_allocated`` over the forward, (4 layers - 2 layers) / 2 per token, is one
layer's saved activations per token, comparable with the engine's per-layer ``saved`` bytes
(accuracy/family_trace_gaps.py prints both). Writes $OUT/family_layers_h200.json.

    OUT=tests/data python -m benchmarks.gpu.gpu_family_layers
"""
import json
import os

import torch
import transformers as T

# name: (model_type, widths, attention, sequence length)
C = {
    "llama-3.2-1b": ("llama", dict(hidden_size=2048, intermediate_size=8192, num_attention_heads=32,
                                   num_key_value_heads=8, head_dim=64, vocab_size=128256), "sdpa", 4096),
    "qwen3-0.6b": ("qwen3", dict(hidden_size=1024, intermediate_size=3072, num_attention_heads=16,
                                 num_key_value_heads=8, head_dim=128, vocab_size=151936), "sdpa", 4096),
    "gemma-3-1b": ("gemma3_text", dict(hidden_size=1152, intermediate_size=6912, num_attention_heads=4,
                                       num_key_value_heads=1, head_dim=256, vocab_size=262144, sliding_window=512),
                   "sdpa", 4096),
    "gemma-2-2b": ("gemma2", dict(hidden_size=2304, intermediate_size=9216, num_attention_heads=8,
                                  num_key_value_heads=4, head_dim=256, vocab_size=256000), "eager", 1024),
    "glm-4-9b-0414": ("glm4", dict(hidden_size=4096, intermediate_size=13696, num_attention_heads=32,
                                   num_key_value_heads=2, head_dim=128, vocab_size=151552), "sdpa", 4096),
    "olmo-2-7b": ("olmo2", dict(hidden_size=4096, intermediate_size=11008, num_attention_heads=32,
                                num_key_value_heads=32, vocab_size=100352), "sdpa", 4096),
    "qwen3-30b-a3b": ("qwen3_moe", dict(hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768,
                                        num_attention_heads=32, num_key_value_heads=4, head_dim=128, num_experts=128,
                                        num_experts_per_tok=8, vocab_size=151936), "sdpa", 4096),
    "qwen2-57b-a14b": ("qwen2_moe", dict(hidden_size=3584, intermediate_size=18944, moe_intermediate_size=2560,
                                         shared_expert_intermediate_size=20480, num_attention_heads=28,
                                         num_key_value_heads=4, num_experts=64, num_experts_per_tok=8,
                                         vocab_size=151936), "sdpa", 4096),
    "gpt-oss-20b": ("gpt_oss", dict(hidden_size=2880, intermediate_size=2880, num_attention_heads=64,
                                    num_key_value_heads=8, head_dim=64, num_local_experts=32, num_experts_per_tok=4,
                                    vocab_size=201088), "eager", 1024),
    "gpt-neox-20b": ("gpt_neox", dict(hidden_size=6144, intermediate_size=24576, num_attention_heads=64,
                                      vocab_size=50432, hidden_act="gelu_fast"), "sdpa", 4096),
    "falcon-7b": ("falcon", dict(hidden_size=4544, num_attention_heads=71, vocab_size=65024), "sdpa", 4096),
    "falcon-7b-eager": ("falcon", dict(hidden_size=4544, num_attention_heads=71, vocab_size=65024), "eager", 4096),
    "falcon-40b": ("falcon", dict(hidden_size=8192, num_attention_heads=128, num_kv_heads=8, vocab_size=65024,
                                  new_decoder_architecture=True), "sdpa", 4096),
    "pythia-1b": ("gpt_neox", dict(hidden_size=2048, intermediate_size=8192, num_attention_heads=8,
                                   vocab_size=50304), "sdpa", 4096),
    "gemma-7b": ("gemma", dict(hidden_size=3072, intermediate_size=24576, num_attention_heads=16,
                               num_key_value_heads=16, head_dim=256, vocab_size=256000), "sdpa", 4096),
    "phi-3-mini-4k": ("phi3", dict(hidden_size=3072, intermediate_size=8192, num_attention_heads=32,
                                   num_key_value_heads=32, vocab_size=32064), "sdpa", 2047),
}


def growth(mt, kw, attention, s, layers):
    c = T.AutoConfig.for_model(mt, num_hidden_layers=layers, pad_token_id=0, **kw)
    c.use_cache = False
    with torch.device("cuda"):
        m = T.AutoModelForCausalLM.from_config(c, dtype=torch.bfloat16, attn_implementation=attention)
    m.train()
    x = torch.randint(0, kw["vocab_size"], (1, s), device="cuda")
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    loss = m(input_ids=x, labels=x).loss
    torch.cuda.synchronize()
    grown = torch.cuda.memory_allocated() - before
    del loss, m, x
    torch.cuda.empty_cache()
    return grown


def main():
    rows = {}
    for name, (mt, kw, attention, s) in C.items():
        try:
            g2, g4 = growth(mt, kw, attention, s, 2), growth(mt, kw, attention, s, 4)
        except Exception as e:  # noqa: BLE001 - recorded; the other cases go on
            rows[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            print(name, "error", rows[name]["error"], flush=True)
            continue
        rows[name] = {"model_type": mt, "attention": attention, "seq_len": s,
                      "growth_2_layers_bytes": g2, "growth_4_layers_bytes": g4,
                      "layer_saved_bytes_per_token": (g4 - g2) / 2 / s}
    out = {"command": "OUT=tests/data python -m benchmarks.gpu.gpu_family_layers", "torch": torch.__version__,
           "transformers": T.__version__, "device": torch.cuda.get_device_name(0), "cases": rows}
    with open(os.path.join(os.environ.get("OUT", "."), "family_layers_h200.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
