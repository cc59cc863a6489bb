"""Side-by-side memory errors of this engine and llm-analysis (PyPI ``llm-analysis``) on the
measured H200 training runs (tests/data/training_runs_h200.json).

llm-analysis is asked the closest question it can express: its ``training()`` with the
same model shape, micro-batch, sequence, flash vs eager attention, recomputation, and
Adam states in the recipe's precision; its peak is ``(weight+op_state+grad+act)``.
Cases it cannot express are listed with the reason::

    pip install llm-analysis
    python -m accuracy.compare_llm_analysis
"""
import json
import logging
import os
import statistics
import warnings

from accuracy.memory_accuracy import case_inputs, measured_peak
from planner_app.core.training.memory import training_memory

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")


def llm_analysis_peak(case, hf):
    """llm-analysis's per-GPU training memory for the case, or raise ValueError(reason)."""
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    from llm_analysis.analysis import ActivationRecomputation, LLMAnalysis
    from llm_analysis.config import GPUConfig, ModelConfig, ParallelismConfig, get_dtype_config_by_name

    if case["recipe"] == "fp32":
        raise ValueError("no fp32 weights (its dtype configs hold 4, 8 or 16-bit weights)")
    if case["recipe"].startswith("amp"):
        raise ValueError("no fp32 parameters under autocast (PyTorch AMP)")
    if hf["model_type"] not in ("gpt2", "llama", "qwen2", "mistral"):
        raise ValueError(f"no {hf['model_type']} architecture (MoE or encoder)")
    h = hf.get("n_embd") or hf["hidden_size"]
    ffn = hf.get("n_inner") or hf.get("intermediate_size") or 4 * h
    try:
        mc = ModelConfig(name=case["config"], num_layers=hf.get("n_layer") or hf["num_hidden_layers"],
                         n_head=hf.get("n_head") or hf["num_attention_heads"], hidden_dim=h,
                         vocab_size=hf["vocab_size"], max_seq_len=case["seq_len"],
                         num_key_value_heads=hf.get("num_key_value_heads"), ffn_embed_dim=ffn,
                         model_type=hf["model_type"])
    except AssertionError as e:
        raise ValueError(f"model shape rejected ({str(e)[:60]})") from None
    gpu = GPUConfig(name="h200", mem_per_GPU_in_GB=141, hbm_bandwidth_in_GB_per_sec=4800,
                    intra_node_bandwidth_in_GB_per_sec=450, intra_node_min_message_latency=8e-6,
                    peak_fp16_TFLOPS=989, peak_i8_TFLOPS=1979, peak_i4_TFLOPS=1979, inter_node_bandwidth_in_GB_per_sec=50)
    la = LLMAnalysis(mc, gpu, get_dtype_config_by_name("w16a16e16"), ParallelismConfig(tp_size=1, pp_size=1, dp_size=1))
    rec = {"none": ActivationRecomputation.NONE, "full": ActivationRecomputation.FULL}[case["recompute"]]
    # its optimizer bytes are master + other: with 2-byte "master" (the bf16 weights themselves),
    # other = the remaining bf16 moments (Adam: one more 2-byte state; SGD momentum: none)
    other = 2 if case["optimizer"] == "adamw" else 0
    s = la.training(batch_size_per_gpu=case["micro_batch"], seq_len=case["seq_len"], gradient_accumulation_steps=1,
                    activation_recomputation=rec, master_weights_dtype_bytes=2, other_op_bytes=other,
                    flash_attn=case["attention"] != "eager", mlp_gated_linear_units=hf["model_type"] != "gpt2",
                    layernorm_dtype_bytes=2)
    return s["(weight+op_state+grad+act)_memory_per_gpu"]


def main():
    with open(os.path.join(DATA, "training_runs_h200.json")) as f:
        cases = json.load(f)["cases"]
    ours_err, theirs_err = [], []
    print(f"{'case':36s} {'measured':>9s} {'ours':>8s} {'llm-analysis':>13s}")
    wins = 0
    both = 0
    for case in cases:
        with open(os.path.join(DATA, "hf_configs", case["config"] + ".json")) as f:
            hf = json.load(f)
        meas = measured_peak(case)
        model, setup, plan = case_inputs(case)
        ours = training_memory(model, setup, plan).peak_bytes / meas - 1
        ours_err.append(abs(ours))
        try:
            theirs = llm_analysis_peak(case, hf) / meas - 1
            theirs_err.append(abs(theirs))
            both += 1
            wins += abs(ours) < abs(theirs)
            other = f"{theirs * 100:+12.1f}%"
        except ValueError as e:
            other = f"  cannot express: {e}"
        print(f"{case['name']:36s} {meas / 1e9:8.2f}G {ours * 100:+7.1f}% {other}")
    print(f"ours: median |error| {statistics.median(ours_err) * 100:.1f}%, max {max(ours_err) * 100:.1f}% on "
          f"{len(ours_err)} cases")
    if theirs_err:
        print(f"llm-analysis: median |error| {statistics.median(theirs_err) * 100:.1f}%, max "
              f"{max(theirs_err) * 100:.1f}% on the {both} cases it can express; ours smaller on {wins} of {both}")


if __name__ == "__main__":
    main()
