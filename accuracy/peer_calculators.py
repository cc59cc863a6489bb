"""The peer memory calculators that accuracy/compare_peers_finetune.py runs, one function per peer
and mode, each called with a normalised case (compare_peers_finetune.load_cases) and returning
(reported_bytes, tensor_bytes, notes) or raising CannotExpress(reason). Imported only by a python
that has the peers installed (their own venv; see compare_peers_finetune.py). Every call works offline
from a config dict or sizes: none downloads a config or weights here.
"""
from __future__ import annotations

import logging
import warnings

PEERS = ("llm-analysis", "ftuneai", "llmcalculator", "ml-memguard", "vramcalc")
GIB = 1024 ** 3
MIB = 1024 ** 2
H200_BYTES = 141 * 10 ** 9  # NVIDIA H200 datasheet: 141 GB HBM3e


class CannotExpress(Exception):
    """The peer has no input for this case (the message says which)."""


def shape(hf: dict) -> dict:
    h = hf.get("n_embd") or hf["hidden_size"]
    heads = hf.get("n_head") or hf["num_attention_heads"]
    return {"h": h, "layers": hf.get("n_layer") or hf["num_hidden_layers"], "heads": heads,
            "kv": hf.get("num_key_value_heads") or heads,
            "ffn": hf.get("n_inner") or hf.get("intermediate_size") or 4 * h,
            "vocab": hf["vocab_size"], "max_pos": hf.get("max_position_embeddings") or hf.get("n_positions"),
            "experts": hf.get("num_local_experts") or hf.get("num_experts") or 0,
            "active": hf.get("num_experts_per_tok") or 0}


# ---------------------------------------------------------------- peers
# Each returns (reported_bytes, tensor_bytes, notes): reported = the peer's total as it prints it,
# tensor = the same without the overhead the peer itself documents as CUDA context /
# fragmentation / framework runtime (max_memory_allocated counts none of that).

def _llm_analysis(model_config):
    """LLMAnalysis on one H200 (datasheet: 141 GB, 4.8 TB/s, 989 dense bf16 TFLOPS), bf16 weights and
    activations, no parallelism."""
    from llm_analysis.analysis import LLMAnalysis
    from llm_analysis.config import GPUConfig, ParallelismConfig, get_dtype_config_by_name

    gpu = GPUConfig(name="h200", mem_per_GPU_in_GB=141, hbm_bandwidth_in_GB_per_sec=4800,
                    intra_node_bandwidth_in_GB_per_sec=450, intra_node_min_message_latency=8e-6,
                    peak_fp16_TFLOPS=989, peak_i8_TFLOPS=1979, peak_i4_TFLOPS=1979,
                    inter_node_bandwidth_in_GB_per_sec=50)
    return LLMAnalysis(model_config, gpu, get_dtype_config_by_name("w16a16e16"),
                       ParallelismConfig(tp_size=1, pp_size=1, dp_size=1))


def run_llm_analysis(c: dict):
    """llm-analysis 0.2.2: LLMAnalysis.training(); peak = (weight+op_state+grad+act)_memory_per_gpu."""
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    from llm_analysis.analysis import ActivationRecomputation
    from llm_analysis.config import ModelConfig

    if c["method"] != "full":
        raise CannotExpress("no LoRA/QLoRA (trains every weight)")
    if c["base"] == "fp32":
        raise CannotExpress("no fp32 weights")
    if c["optimizer"] == "bnb-paged-adamw8bit":
        raise CannotExpress("no paged optimizer")
    s, hf = shape(c["hf"]), c["hf"]
    if hf["model_type"] not in ("gpt2", "llama", "qwen2", "mistral"):
        raise CannotExpress(f"no {hf['model_type']} architecture")
    try:
        mc = ModelConfig(name=c["name"], num_layers=s["layers"], n_head=s["heads"], hidden_dim=s["h"],
                         vocab_size=s["vocab"], max_seq_len=c["seq"], num_key_value_heads=s["kv"],
                         ffn_embed_dim=s["ffn"], model_type=hf["model_type"])
    except AssertionError as e:
        raise CannotExpress(f"rejects the shape ({str(e)[:70]})") from None
    la = _llm_analysis(mc)
    notes = ["no AdamW implementation knob"] if c["optimizer"].startswith("adamw") else []
    # its gradient bytes = master_weights_dtype_bytes and optimizer = master + other per parameter:
    # master 2 (bf16 weights and gradients), other 2 = bf16 Adam m+v less the 2 already in master;
    # bitsandbytes 8-bit AdamW: m+v 1 byte each = 2 = master, other 0
    other = 0 if c["optimizer"] == "bnb-adamw8bit" else 2
    if other == 0:
        notes.append("8-bit states as 2 B/param, no block-wise absmax")
    r = la.training(batch_size_per_gpu=c["batch"], seq_len=c["seq"], gradient_accumulation_steps=1,
                    activation_recomputation=ActivationRecomputation.FULL if c["gc"] else ActivationRecomputation.NONE,
                    master_weights_dtype_bytes=2, other_op_bytes=other, flash_attn=True,
                    mlp_gated_linear_units=hf["model_type"] != "gpt2", layernorm_dtype_bytes=2)
    peak = r["(weight+op_state+grad+act)_memory_per_gpu"]
    if not hf.get("tie_word_embeddings", hf["model_type"] == "gpt2"):
        notes.append("counts the output layer as tied to the embedding")  # get_num_params_embedding default
    return peak, peak, notes


def run_ftuneai(c: dict):
    """ftuneai 0.4.1: core.memory.MemoryEstimator(ModelSpec, TrainingConfig).estimate(), total_gb in GiB."""
    from ftuneai.core.memory import CUDA_OVERHEAD_FRACTION, MemoryEstimator
    from ftuneai.core.models import FineTuneMethod, LoRATarget, ModelSpec, OptimizerType, Quantization, TrainingConfig

    if c["optimizer"] == "bnb-paged-adamw8bit":
        raise CannotExpress("no paged optimizer")
    s, notes = shape(c["hf"]), []
    spec = ModelSpec(name=c["name"], parameters=c["params"], hidden_size=s["h"], num_layers=s["layers"],
                     num_attention_heads=s["heads"], num_kv_heads=s["kv"], intermediate_size=s["ffn"],
                     vocab_size=s["vocab"], max_seq_length=s["max_pos"],
                     default_dtype="float32" if c["base"] == "fp32" else "bfloat16",
                     is_moe=bool(s["experts"]), num_experts=s["experts"] or None,
                     num_active_experts=s["active"] or None)
    opt = OptimizerType.ADAM_8BIT if c["optimizer"] == "bnb-adamw8bit" else OptimizerType.ADAMW
    target = {"qv": LoRATarget.ATTENTION, "qkvo": LoRATarget.ATTENTION_ALL, "all-linear": LoRATarget.ALL_LINEAR,
              None: LoRATarget.ATTENTION}[c["targets"]]
    cfg = TrainingConfig(model=c["name"], method=FineTuneMethod(c["method"]),
                         quantization=Quantization.INT4 if c["method"] == "qlora" else Quantization.NONE,
                         batch_size=c["batch"], seq_length=c["seq"], gradient_checkpointing=c["gc"], optimizer=opt,
                         lora_rank=c["rank"] or 16, lora_target=target, flash_attention=True)  # SDPA: no N x N matrix
    if c["method"] == "full":
        notes.append("Adam states fp32, 8 B/param (case: bf16, 4 B)" if opt == OptimizerType.ADAMW
                     else "8-bit states 2 B/param")
    else:
        if c["adapter"] == "fp32":
            notes.append("adapters and their grads bf16 (case: fp32)")
        if c["dropout"]:
            notes.append("no dropout")
    if c["method"] == "qlora":
        notes.append("whole base 0.5 B/param + 2%, activations x2; no fp32 prepare casts" if c["prepare"]
                     else "whole base 0.5 B/param + 2%, activations x2")
    if c["base"] == "fp32" and c["method"] != "qlora":
        notes.append("no autocast copies")
    if c["optimizer"].startswith("adamw"):
        notes.append("no AdamW implementation knob")
    m = MemoryEstimator(spec, cfg).estimate()
    reported = m.total_gb * GIB
    # its documented overhead: total = subtotal x (1 + CUDA_OVERHEAD_FRACTION) ("CUDA context, allocator
    # fragmentation, cuDNN workspace"; ftuneai/core/training/memory.py), no ZeRO-3 buffer on one GPU
    return reported, reported / (1 + CUDA_OVERHEAD_FRACTION), notes


def _llmcalculator_h200():
    """One H200 (its budget only sets the verdict, not the estimate)."""
    from llmcalculator.hardware.base import CPU, Accelerator, HardwareProfile

    return HardwareProfile(cpu=CPU("cpu", 16, 16), ram_bytes=128 * GIB,
                           accelerators=[Accelerator("H200", "nvidia", H200_BYTES, 4800, 989, False, "9.0")])


def run_llmcalculator(c: dict):
    """llmcalculator 0.2.3: estimate.estimate(spec from config.json, hardware, workload)."""
    from llmcalculator import workloads
    from llmcalculator.estimate import estimate
    from llmcalculator.models.catalog import _spec_from_config  # its config.json reader (no network)

    if c["optimizer"] in ("bnb-adamw8bit", "bnb-paged-adamw8bit"):
        raise CannotExpress("no optimizer choice (Adam only)")
    spec = _spec_from_config(c["name"], c["hf"])
    hw = _llmcalculator_h200()
    wl = workloads.get(c["method"])
    quant = {"full": "bf16", "lora": "fp32" if c["base"] == "fp32" else "bf16", "qlora": "nf4"}[c["method"]]
    r = estimate(spec, hw, wl, quant_name=quant, context=c["seq"], batch=c["batch"], device="gpu",
                         gradient_checkpointing=c["gc"])
    notes = []
    if abs(spec.params / c["params"] - 1) > 0.01:
        notes.append(f"its parameter count {spec.params / 1e9:.2f}B (real {c['params'] / 1e9:.2f}B)")
    if c["method"] == "full":
        notes.append("fp32 master + Adam, 12 B/param (case: bf16, 4 B)")
    else:
        notes.append("no rank/targets: 0.5% of params trainable"
                     + (f" (real {c['trainable'] / c['params']:.2%})" if c["trainable"] else ""))
    if c["method"] == "qlora":
        notes.append("nf4 base 0.55 B/param" + ("; no fp32 prepare casts" if c["prepare"] else ""))
    reported = r.breakdown.total
    # its documented overhead: Workload.overhead_bytes ("framework, CUDA/Metal context, allocator
    # fragmentation"; llmcalculator/workloads.py), a constant per workload
    return reported, reported - wl.overhead_bytes, notes


def run_memguard(c: dict):
    """ml-memguard 0.5.0: memory_guard.estimator.estimate_training_memory(ModelSpec, TrainSpec), MiB."""
    from memory_guard.constants import FIXED_OVERHEAD_MB
    from memory_guard.estimator import FinetuneMethod, ModelArch, ModelSpec, TrainSpec, estimate_training_memory

    if c["optimizer"] in ("bnb-adamw8bit", "bnb-paged-adamw8bit"):
        raise CannotExpress("no 8-bit optimizer")
    s, notes = shape(c["hf"]), []
    moe = bool(s["experts"])
    bits = 4 if c["method"] == "qlora" else 32 if c["base"] == "fp32" else 16
    ms = ModelSpec(params=c["params"], hidden_dim=s["h"], num_heads=s["heads"], num_kv_heads=s["kv"],
                   num_layers=s["layers"], intermediate_dim=s["ffn"], bits=bits,
                   arch=ModelArch.MOE if moe else ModelArch.DENSE, num_experts=s["experts"] or 1,
                   num_active_experts=s["active"] or 1)
    # lora_targets = adapted projections per layer; PEFT all-linear on a Llama = 7 (q,k,v,o,gate,up,down),
    # on a Mixtral = q,k,v,o + 3 per expert + the router
    n_targets = {"qv": 2, "qkvo": 4, "all-linear": 4 + 3 * s["experts"] + 1 if moe else 7, None: 0}[c["targets"]]
    ts = TrainSpec(method=FinetuneMethod(c["method"]), batch_size=c["batch"], seq_length=c["seq"],
                   lora_rank=c["rank"] or 8, lora_layers=s["layers"],  # also its layer count for activations
                   lora_targets=n_targets, optimizer="adamw", grad_checkpoint=c["gc"], mixed_precision=True,
                   qlora_double_quant=c["method"] == "qlora", flash_attention=True)
    r = estimate_training_memory(model=ms, train=ts)
    if c["method"] == "full":
        notes.append("weights counted twice, Adam as 3 copies: 12 B/param (case 8)")
    else:
        notes.append("each target hidden x hidden" + ("; adapters bf16 (case: fp32)" if c["adapter"] == "fp32" else ""))
        if moe and c["targets"] == "all-linear":
            notes.append(f"all-linear given as {n_targets} targets (q,k,v,o, 3 per expert, router)")
        if c["dropout"]:
            notes.append("no dropout")
    if c["method"] == "qlora":
        notes.append("whole base 4-bit + 0.0625 B/param" + ("; no fp32 prepare casts" if c["prepare"] else ""))
    if c["optimizer"].startswith("adamw"):
        notes.append("no AdamW implementation knob")
    # its documented overhead: subtotal x overhead_ratio (0.25) + FIXED_OVERHEAD_MB ("fragmentation, temp
    # buffers" and "framework runtime"; memory_guard/estimator.py, constants.py)
    assert r.overhead_mb >= FIXED_OVERHEAD_MB
    return r.total_mb * MIB, (r.total_mb - r.overhead_mb) * MIB, notes


def run_vramcalc(c: dict):
    """vramcalc 0.1.2: estimate.estimate(config dict, mode='train', ...).total (bytes; its overhead_gb
    is kept apart and only added when checking a fit)."""
    from vramcalc.arch import UnsupportedModelError
    from vramcalc.estimate import estimate

    if c["method"] == "qlora":
        raise CannotExpress("no 4-bit base")
    if c["optimizer"] in ("bnb-adamw8bit", "bnb-paged-adamw8bit"):
        raise CannotExpress("no 8-bit optimizer")
    notes = []
    # precision 'pure': weights in `dtype`; 'amp': fp32 weights with autocast to `dtype`
    precision = "amp" if c["base"] == "fp32" else "pure"
    try:
        r = estimate(c["hf"], mode="train", dtype="bf16", batch=c["batch"], seq_len=c["seq"],
                     lora_rank=c["rank"] if c["method"] == "lora" else None, grad_checkpoint=c["gc"],
                     optimizer="adamw", precision=precision, attn_impl="sdpa")
    except UnsupportedModelError:
        raise CannotExpress(f"no {c['hf']['model_type']} architecture") from None
    if c["method"] == "lora":
        if c["targets"] != "qkvo":
            notes.append(f"targets fixed q,k,v,o (case: {c['targets']})")
        if c["adapter"] != "fp32":
            notes.append(f"adapters fixed fp32 (case: {c['adapter']})")
        if c["dropout"]:
            notes.append("no dropout")
    if c["optimizer"] != "adamw-foreach":
        notes.append("AdamW step temporary always (foreach)")
    return r.total, r.total, notes


# generate(): the same peers' inference estimates (ftuneai has none)

def infer_llm_analysis(c: dict):
    """LLMAnalysis.inference(); peak = weights + max(prefill activations, KV cache + decode activations),
    the two fits its inference() checks."""
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    from llm_analysis.config import ModelConfig

    s, hf = shape(c["hf"]), c["hf"]
    try:
        mc = ModelConfig(name=c["name"], num_layers=s["layers"], n_head=s["heads"], hidden_dim=s["h"],
                         vocab_size=s["vocab"], max_seq_len=c["prompt"] + c["new"], num_key_value_heads=s["kv"],
                         ffn_embed_dim=s["ffn"], model_type=hf["model_type"])
    except AssertionError as e:
        raise CannotExpress(f"rejects the shape ({str(e)[:70]})") from None
    la = _llm_analysis(mc)
    r = la.inference(batch_size_per_gpu=c["batch"], seq_len=c["prompt"], num_tokens_to_generate=c["new"],
                     use_kv_cache=c["cache"], layernorm_dtype_bytes=2, kv_cache_dtype_bytes=2)
    peak = r["weight_memory_per_gpu"] + max(r["prefill_activation_memory_per_gpu"],
                                           r["kv_cache_memory_per_gpu"] + r["decode_activation_memory_per_gpu"])
    return peak, peak, [] if c["cache"] else ["no-cache generate() as its use_kv_cache=False"]


def _need_cache(c: dict):
    if not c["cache"]:
        raise CannotExpress("no generate() without a KV cache")


def infer_llmcalculator(c: dict):
    """estimate(..., workloads.INFERENCE, quant_name='bf16', context=prompt + new)."""
    from llmcalculator import workloads
    from llmcalculator.estimate import estimate
    from llmcalculator.models.catalog import _spec_from_config

    _need_cache(c)
    spec = _spec_from_config(c["name"], c["hf"])
    hw = _llmcalculator_h200()
    r = estimate(spec, hw, workloads.INFERENCE, quant_name="bf16", context=c["prompt"] + c["new"], batch=c["batch"],
                 device="gpu", kv_quant="bf16")
    return r.breakdown.total, r.breakdown.total - workloads.INFERENCE.overhead_bytes, [
        "activations: llama.cpp-style compute buffer, no logits"]


def infer_memguard(c: dict):
    """estimate_inference_memory(ModelSpec, batch, seq_length=prompt + new), MiB."""
    from memory_guard.estimator import ModelSpec, estimate_inference_memory

    _need_cache(c)
    s = shape(c["hf"])
    ms = ModelSpec(params=c["params"], hidden_dim=s["h"], num_heads=s["heads"], num_kv_heads=s["kv"],
                   num_layers=s["layers"], intermediate_dim=s["ffn"], bits=16)
    r = estimate_inference_memory(model=ms, batch_size=c["batch"], seq_length=c["prompt"] + c["new"])
    notes = ["head_dim = hidden / heads"] if c["hf"].get("head_dim") not in (None, s["h"] // s["heads"]) else []
    # overhead: subtotal x OVERHEAD_RATIO_INFERENCE (0.15) + FIXED_OVERHEAD_MB (memory_guard/estimator.py)
    notes.append("activations one hidden vector per token, no logits")
    return r.total_mb * MIB, (r.total_mb - r.overhead_mb) * MIB, notes


def infer_vramcalc(c: dict):
    """estimate(config, mode='inference', dtype='bf16', seq_len=prompt + new, attn_impl='sdpa').total."""
    from vramcalc.estimate import estimate

    _need_cache(c)
    r = estimate(c["hf"], mode="inference", dtype="bf16", batch=c["batch"], seq_len=c["prompt"] + c["new"],
                 attn_impl="sdpa")
    return r.total, r.total, ["logits for every prompt token (a forward pass, not generate())"]


INFER_RUNNERS = {"llm-analysis": infer_llm_analysis, "llmcalculator": infer_llmcalculator,
                 "ml-memguard": infer_memguard, "vramcalc": infer_vramcalc}

RUNNERS = {"llm-analysis": run_llm_analysis, "ftuneai": run_ftuneai, "llmcalculator": run_llmcalculator,
           "ml-memguard": run_memguard, "vramcalc": run_vramcalc}
IMPORTS = {"llm-analysis": "llm_analysis", "ftuneai": "ftuneai", "llmcalculator": "llmcalculator",
           "ml-memguard": "memory_guard", "vramcalc": "vramcalc"}
