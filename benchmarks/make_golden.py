"""Golden file of ``gpu-planner estimate --json`` over a fixed list of configurations.

Run from anywhere with the project's environment: ``.venv/bin/python benchmarks/make_golden.py``
(it imports ``planner_app`` as installed, ``pip install -e .``; from the repository root
``python -m benchmarks.make_golden`` needs no install). It runs every case in-process through
``planner_app.cli.main`` (from the repository root, with an empty user directory so that no
user database or calibration can change the numbers), fails loudly when a case does not exit 0,
and writes ``tests/data/golden_estimates.json``. ``tests/unit/test_golden.py`` re-runs the cases
and compares: after a refactor the numbers must be the same, and every difference is a bug fix
to be explained.

The list is deterministic (no randomness) and spans both modes, every recipe, optimizer,
framework, attention kernel, recompute mode, ZeRO stage, offload, every parallel axis (tp, pp,
cp, ep, dp, sequence parallel, interleaved pipeline), every GPU, instances of several providers
(a CNY-priced one, price bases and mixes, an instance without a price), every inter-node fabric,
NIC counts, budgets, efficiency overrides, inference dtypes, Hugging Face config.json files, a
non-transformer preset and plans that do not fit.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "golden_estimates.json")
HF = "tests/data/hf_configs/"  # relative to ROOT: the argv (and model names) stay location-free

GPUS = ["t4", "v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-16gb", "a10", "a10g", "l4", "l40s", "l20",
        "a100-pcie-40gb", "a100-pcie-80gb", "a100-sxm-40gb", "a100-sxm-80gb", "a800-sxm-80gb", "h100-sxm",
        "h100-pcie", "h100-nvl", "h800-sxm", "h20", "h200-sxm", "h200-nvl", "b200", "gb200", "b300", "rtx-4090",
        "rtx-5090", "rtx-6000-ada", "rtx-a6000", "mi210", "mi250x", "mi300x", "mi325x", "mi355x", "gaudi2",
        "gaudi3"]
# GPUs with an fp8 rate in spec_data/ (the fp8 recipe is only meaningful there).
FP8_GPUS = ["l4", "l40s", "l20", "h100-sxm", "h100-pcie", "h100-nvl", "h800-sxm", "h20", "h200-sxm", "h200-nvl",
            "b200", "gb200", "b300", "rtx-4090", "rtx-5090", "rtx-6000-ada", "mi300x", "mi325x", "mi355x",
            "gaudi2", "gaudi3"]
RECIPES = ["fp32", "amp-bf16", "amp-fp16", "bf16", "mixed-bf16", "fp8"]
OPTIMIZERS = ["adamw", "adam", "sgd", "sgd-momentum", "adafactor", "adamw-8bit"]
FRAMEWORKS = ["pytorch", "megatron", "deepspeed"]
FABRICS = ["ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "roce-100", "roce-200", "roce-400", "efa", "efa-v2", "efa-v3",
           "erdma", "gaudi-roce", "eth-10", "eth-25", "eth-100", "eth-200", "eth-400"]


def t(*args) -> list:
    """A training case: ``estimate`` plus the options, as strings."""
    return ["estimate", *[str(a) for a in args]]


def i(*args) -> list:
    """An inference case."""
    return ["estimate", "--mode", "inference", *[str(a) for a in args]]


def training_precision() -> list:
    small = ["--model", "llama-3.2-1b", "--gpu", "h100-sxm", "--micro-batch", 2, "--seq-len", 2048]
    # Megatron has no fp32 weights or autocast: it refuses fp32 and amp-*.
    cases = [t(*small, "--recipe", r, "--framework", f) for r in RECIPES for f in FRAMEWORKS
             if not (f == "megatron" and r in ("fp32", "amp-bf16", "amp-fp16"))]
    cases += [t(*small, "--optimizer", o, "--framework", f) for o in OPTIMIZERS for f in FRAMEWORKS]
    # Recipe x optimizer on a GPU without fp8, sharded over a node so that most fit.
    a100 = ["--model", "llama-2-7b", "--gpu", "a100-sxm-80gb", "--dp", 8, "--zero", 1, "--seq-len", 4096]
    cases += [t(*a100, "--recipe", r, "--optimizer", o) for r in RECIPES[:5] for o in OPTIMIZERS]
    return cases


def training_kernels() -> list:
    base = ["--model", "gpt2-xl", "--gpu", "h100-sxm", "--micro-batch", 4, "--seq-len", 2048]
    return [t(*base, "--attention", a, "--recompute", r, "--framework", f)
            for a in ["flash", "sdpa", "eager"] for r in ["none", "selective", "full"] for f in FRAMEWORKS]


def training_zero() -> list:
    base = ["--model", "llama-2-13b", "--gpu", "a100-sxm-80gb", "--dp", 8, "--seq-len", 4096, "--recipe", "mixed-bf16"]
    cases = [t(*base, "--zero", z, "--framework", f) for z in range(4) for f in FRAMEWORKS]
    cases += [t(*base, "--zero", z, "--offload", o, "--framework", "deepspeed")
              for z in range(4) for o in ["optimizer", "params"]]
    cases += [t(*base, "--zero", 3, "--offload", o, "--framework", "pytorch") for o in ["optimizer", "params"]]
    return cases


def training_parallel() -> list:
    m70 = ["--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--seq-len", 4096, "--tokens", "1e12"]
    cases = []
    for tp, pp in [(1, 1), (2, 1), (4, 1), (8, 1), (1, 2), (2, 2), (4, 2), (8, 2), (4, 4), (8, 4), (8, 8)]:
        cases.append(t(*m70, "--tp", tp, "--pp", pp, "--dp", 2, "--framework", "megatron", "--recipe", "mixed-bf16",
                       "--zero", 1))
    for tp in [2, 4, 8]:
        cases.append(t(*m70, "--tp", tp, "--pp", 4, "--dp", 2, "--framework", "megatron", "--recipe", "mixed-bf16",
                       "--sequence-parallel", "--recompute", "selective"))
    for pp, vp in [(2, 2), (4, 2), (4, 4), (8, 2), (8, 5)]:
        cases.append(t(*m70, "--tp", 8, "--pp", pp, "--pp-schedule", "interleaved", "--vp", vp,
                       "--framework", "megatron", "--sequence-parallel", "--global-batch", 512))
    for cp in [2, 4, 8]:
        cases.append(t(*m70[:4], "--seq-len", 32768, "--tp", 8, "--cp", cp, "--pp", 2, "--framework", "megatron",
                       "--sequence-parallel", "--recompute", "full"))
    cases.append(t("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--seq-len", 65536, "--cp", 8,
                   "--framework", "pytorch", "--attention", "flash"))
    # --gpus instead of --dp; --gpus-per-node; dp from the GPU count.
    for g in [8, 16, 64, 256, 1024]:
        cases.append(t("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", g, "--zero", 1, "--tokens", "1e12"))
    for g, per in [(16, 4), (16, 2), (32, 4), (8, 1)]:
        cases.append(t("--model", "llama-3.1-8b", "--gpu", "a100-sxm-80gb", "--gpus", g, "--gpus-per-node", per,
                       "--zero", 2, "--tokens", "1e11"))
    cases.append(t("--model", "llama-3.1-405b", "--gpu", "h100-sxm", "--tp", 8, "--pp", 16, "--dp", 8,
                   "--framework", "megatron", "--sequence-parallel", "--pp-schedule", "interleaved", "--vp", 2,
                   "--recompute", "full", "--global-batch", 2048, "--tokens", "1.5e13", "--recipe", "fp8"))
    cases.append(t("--model", "gpt3-175b", "--gpu", "a100-sxm-80gb", "--tp", 8, "--pp", 8, "--dp", 16,
                   "--framework", "megatron", "--global-batch", 1536, "--seq-len", 2048, "--recompute", "selective",
                   "--sequence-parallel", "--tokens", "3e11"))
    cases.append(t("--model", "gpt-22b", "--gpu", "a100-sxm-80gb", "--tp", 8, "--framework", "megatron",
                   "--seq-len", 2048, "--micro-batch", 4, "--recompute", "selective", "--sequence-parallel"))
    cases.append(t("--model", "mt-nlg-530b", "--gpu", "a100-sxm-80gb", "--tp", 8, "--pp", 35, "--dp", 8,
                   "--framework", "megatron", "--seq-len", 2048, "--global-batch", 1920, "--recompute", "selective",
                   "--sequence-parallel"))
    cases.append(t("--model", "gpt-1t", "--gpu", "a100-sxm-80gb", "--tp", 8, "--pp", 64, "--dp", 6,
                   "--framework", "megatron", "--seq-len", 2048, "--global-batch", 2304, "--recompute", "selective",
                   "--sequence-parallel"))
    return cases


def training_moe() -> list:
    cases = []
    for ep, tp in [(1, 1), (2, 1), (4, 1), (8, 1), (2, 2), (4, 2), (8, 2), (2, 4)]:
        cases.append(t("--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--ep", ep, "--tp", tp, "--seq-len", 4096,
                       "--framework", "megatron", "--recipe", "mixed-bf16", "--zero", 1, "--dp", 2))
    for ep, pp in [(8, 1), (8, 4), (4, 8)]:
        cases.append(t("--model", "mixtral-8x22b", "--gpu", "h200-sxm", "--ep", ep, "--pp", pp, "--tp", 2,
                       "--framework", "megatron", "--recompute", "full", "--tokens", "1e12"))
    for ep, pp, dp in [(8, 8, 2), (16, 8, 1), (64, 16, 1), (32, 16, 2)]:
        cases.append(t("--model", "deepseek-v3", "--gpu", "h800-sxm", "--ep", ep, "--pp", pp, "--dp", dp,
                       "--framework", "megatron", "--recipe", "fp8", "--recompute", "selective",
                       "--global-batch", 1920, "--tokens", "1.48e13"))
    mini = HF + "mixtral-mini.json"
    for ep in [1, 2, 4, 8]:
        cases.append(t("--model", mini, "--gpu", "a100-sxm-40gb", "--ep", ep, "--micro-batch", 2, "--seq-len", 2048))
    cases.append(t("--model", mini, "--gpu", "h100-sxm", "--ep", 4, "--framework", "deepspeed", "--zero", 2,
                   "--dp", 2))
    return cases


def training_gpus() -> list:
    cases = [t("--model", "llama-3.2-1b", "--gpu", g, "--seq-len", 2048, "--micro-batch", 2, "--tokens", "1e10")
             for g in GPUS]
    cases += [t("--model", "llama-3.1-8b", "--gpu", g, "--gpus", 8, "--zero", 3, "--recipe", "fp8",
                "--seq-len", 4096) for g in FP8_GPUS]
    return cases


def training_instances() -> list:
    insts = ["p4d.24xlarge", "p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "g5.48xlarge", "g6e.48xlarge",
             "Standard_ND96isr_H100_v5", "Standard_ND96amsr_A100_v4", "Standard_NC96ads_A100_v4",
             "a3-megagpu-8g", "a3-ultragpu-8g", "a2-ultragpu-8g", "gpu_8x_h100_sxm5", "gpu_8x_b200_sxm6",
             "gpu-h200-sxm_8gpu-128vcpu-1600gb", "NVIDIA HGX H100", "NVIDIA GB200 NVL72 (4-GPU node)",
             "ecs.gn7e-c16g1.32xlarge", "ecs.ebmgn8v.48xlarge", "GT4.41XLARGE948", "p5e.48xlarge",
             "Standard_ND96isr_MI300X_v5"]
    base = ["--model", "llama-3.1-8b", "--gpus", 16, "--zero", 1, "--tokens", "1e11"]
    cases = [t(*base, "--instance", x) for x in insts]
    for x in ["p5.48xlarge", "Standard_ND96isr_H100_v5", "a3-ultragpu-8g", "NVIDIA HGX H200"]:
        cases += [t(*base, "--instance", x, "--price", p) for p in ["on_demand", "reserved_1yr", "reserved_3yr", "spot"]
                  if not (x == "NVIDIA HGX H200" and p.startswith("reserved"))
                  and not (x == "Standard_ND96isr_H100_v5" and p == "spot")]
    for mix in ["reserved_1yr=0.8,on_demand=0.2", "80% reserved-1yr + 20% on-demand", "spot=0.5,on_demand=0.5",
                "reserved_3yr=1"]:
        cases.append(t(*base, "--instance", "p5.48xlarge", "--price-mix", mix))
    for rate in ["6.5", "7.25"]:
        cases.append(t(*base, "--instance", "ecs.gn7e-c16g1.32xlarge", "--cny-per-usd", rate))
    cases.append(t(*base, "--instance", "p4d.24xlarge", "--fabric", "ib-hdr", "--nics-per-node", 8))
    cases.append(t(*base, "--instance", "p4d.24xlarge", "--gpus-per-node", 4))
    return cases


def training_network() -> list:
    base = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", 32, "--tokens", "1e11", "--seq-len", 4096]
    cases = [t(*base, "--fabric", f) for f in FABRICS]
    cases += [t(*base, "--fabric", "ib-ndr", "--nics-per-node", n) for n in [1, 2, 4]]
    cases += [t(*base, "--fabric", "roce-200", "--nics-per-node", n, "--zero", 3) for n in [1, 8]]
    cases += [t("--model", "llama-2-13b", "--gpu", "a100-pcie-80gb", "--gpus", 16, "--fabric", "eth-25",
                "--zero", 2, "--tokens", "1e10")]
    return cases


def training_budget() -> list:
    base = ["--model", "qwen2.5-7b", "--gpu", "h200-sxm", "--gpus", 64, "--zero", 1, "--seq-len", 4096]
    cases = [t(*base, "--tokens", tok) for tok in ["1e9", "2.5e11", "1.8e13"]]
    cases += [t(*base, "--global-batch", gb) for gb in [64, 256, 1024]]
    cases += [t(*base, "--global-batch", 512, "--micro-batch", mb, "--tokens", "1e12") for mb in [1, 2, 4]]
    cases += [t(*base, "--mfu", m, "--tokens", "1e12") for m in ["0.2", "0.4", "0.55"]]
    cases += [t(*base, "--achieved-tflops", x, "--tokens", "1e12") for x in ["250", "400"]]
    cases += [t("--model", "llama-3.1-70b", "--instance", "p5.48xlarge", "--gpus", 128, "--tp", 8, "--zero", 1,
                "--mfu", "0.38", "--tokens", "2e12", "--price", "reserved_1yr")]
    return cases


def training_models() -> list:
    presets = ["gpt2", "gpt2-medium", "gpt2-large", "bert-base-uncased", "bert-large-uncased", "llama-2-7b",
               "tinyllama-1.1b", "mistral-7b", "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-72b", "nlp-1b",
               "llama-3.2-3b"]
    cases = [t("--model", p, "--gpu", "h100-sxm", "--gpus", 8, "--zero", 3, "--micro-batch", 2) for p in presets]
    configs = ["gpt2.json", "bert-base-uncased.json", "llama-3.2-1b.json", "qwen2.5-0.5b.json", "mistral-7b.json",
               "mixtral-8x7b.json", "deepseek-v3.json"]
    cases += [t("--model", HF + c, "--gpu", "h200-sxm", "--gpus", 8, "--zero", 3, "--seq-len", 2048)
              for c in configs]
    # A non-transformer preset.
    for g, mb in [("a100-sxm-80gb", 256), ("v100-sxm2-16gb", 64), ("h100-sxm", 512)]:
        cases.append(t("--model", "resnet-50", "--gpu", g, "--micro-batch", mb, "--recipe",
                       "amp-fp16" if g.startswith("v100") else "amp-bf16"))
    cases.append(t("--model", "resnet-50", "--gpu", "a100-sxm-80gb", "--gpus", 8, "--micro-batch", 256,
                   "--framework", "deepspeed", "--tokens", "1e9"))
    # Plans that do not fit (JSON all the same).
    cases += [t("--model", "llama-3.1-405b", "--gpu", "h100-sxm"),
              t("--model", "llama-3.1-70b", "--gpu", "rtx-4090", "--recipe", "fp32"),
              t("--model", "llama-2-70b", "--gpu", "a100-sxm-40gb", "--gpus", 8, "--zero", 1),
              t("--model", "deepseek-v3", "--gpu", "h100-sxm", "--gpus", 8),
              t("--model", "llama-3.1-8b", "--gpu", "t4", "--seq-len", 8192, "--micro-batch", 8),
              t("--model", "gpt-1t", "--gpu", "b200", "--tp", 8, "--pp", 8)]
    return cases


def inference() -> list:
    cases = []
    for w in ["bf16", "fp16", "fp8", "int8", "int4"]:
        for kv in ["bf16", "fp16", "fp8"]:
            cases.append(i("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", 16, "--prompt-len", 2048,
                           "--new-tokens", 256, "--weights-dtype", w, "--kv-dtype", kv))
    for tp in [1, 2, 4, 8]:
        cases.append(i("--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--tp", tp, "--batch", 32,
                       "--prompt-len", 4096, "--new-tokens", 512))
        cases.append(i("--model", "mixtral-8x7b", "--gpu", "a100-sxm-80gb", "--tp", tp, "--batch", 8,
                       "--weights-dtype", "int8"))
    for b in [1, 4, 64, 256]:
        for p, n in [(128, 128), (8192, 1024)]:
            cases.append(i("--model", "qwen2.5-7b", "--gpu", "l40s", "--batch", b, "--prompt-len", p,
                           "--new-tokens", n, "--kv-dtype", "fp8"))
    for a in ["flash", "sdpa", "eager"]:
        cases.append(i("--model", "llama-2-7b", "--gpu", "a10g", "--attention", a, "--batch", 4,
                       "--weights-dtype", "int4"))
    for g in ["t4", "l4", "a100-pcie-40gb", "h100-pcie", "h20", "h200-sxm", "b200", "mi300x", "gaudi3",
              "rtx-4090", "v100-sxm2-32gb", "rtx-a6000"]:
        cases.append(i("--model", "llama-3.2-3b", "--gpu", g, "--batch", 8, "--prompt-len", 1024, "--new-tokens", 256))
    cases += [i("--model", "llama-3.1-405b", "--gpu", "h200-sxm", "--tp", 8, "--weights-dtype", "fp8",
                "--kv-dtype", "fp8", "--batch", 16),
              i("--model", "llama-3.1-405b", "--gpu", "h100-sxm", "--tp", 8),          # does not fit
              i("--model", "deepseek-v3", "--gpu", "h200-sxm", "--tp", 8, "--weights-dtype", "fp8"),
              i("--model", "llama-2-13b", "--gpu", "t4", "--batch", 64, "--prompt-len", 4096),  # does not fit
              i("--model", "gpt2", "--gpu", "t4", "--batch", 32, "--prompt-len", 512, "--new-tokens", 64),
              i("--model", "mixtral-8x22b", "--gpu", "b200", "--tp", 4, "--weights-dtype", "fp8", "--batch", 64)]
    for x in ["p5.48xlarge", "g6e.48xlarge", "ecs.gn7i-c8g1.2xlarge", "gpu_1x_h100_sxm5"]:
        cases.append(i("--model", "llama-3.1-8b", "--instance", x, "--batch", 8))
    # (--mfu, --achieved-tflops and --framework are training options: inference never used them, and refuses
    # them: --mfu and --achieved-tflops since issue 16, --framework since the typed requests of issue 28)
    for c in ["llama-3.1-8b.json", "qwen2.5-1.5b.json", "gpt2-medium.json", "mixtral-mini.json", "llama-2-70b.json"]:
        cases.append(i("--model", HF + c, "--gpu", "h100-sxm", "--batch", 4, "--tp", 2 if "70b" in c else 1))
    return cases


def finetune() -> list:
    """LoRA and QLoRA (issue 14): ranks, target sets, adapter dtypes, dropout, recipes, recomputation,
    prepare_model_for_kbit_training, data parallelism with ZeRO, GPT-2 and BERT module names; the
    bf16-autocast recipe on full fine-tuning; generate() against a hand-written loop."""
    base = ["--model", "llama-2-7b", "--gpu", "h100-sxm", "--micro-batch", 4, "--seq-len", 2048]
    cases = [t(*base, "--finetune", f, "--lora-rank", r, "--lora-targets", tg)
             for f in ["lora", "qlora"] for r in [8, 64] for tg in ["q_proj,v_proj", "all-linear"]]
    cases += [t(*base, "--finetune", "lora", "--recipe", r) for r in ["fp32", "amp-bf16", "bf16", "bf16-autocast"]]
    cases += [t(*base, "--finetune", "lora", "--lora-dtype", "bf16", "--lora-dropout", "0.05", "--recompute", rc)
              for rc in ["none", "selective", "full"]]
    cases += [t(*base, "--finetune", "qlora", "--qlora-prepare", "--recipe", r) for r in ["bf16", "bf16-autocast"]]
    cases += [t("--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", 8, "--zero", z, "--finetune", "qlora",
                "--lora-targets", "all-linear", "--tokens", "1e9") for z in [0, 1, 3]]
    cases += [t("--model", m, "--gpu", "a10g", "--finetune", "lora", "--lora-targets", tg)
              for m, tg in [("gpt2", "c_attn,c_proj,c_fc"), ("bert-base-uncased", "query,value")]]
    cases += [t("--model", "mixtral-8x7b", "--gpu", "h200-sxm", "--gpus", 8, "--zero", 3, "--finetune", "lora",
                "--lora-targets", "q_proj,k_proj,v_proj,o_proj")]
    cases += [t("--model", m, "--gpu", "h100-sxm", "--recipe", "bf16-autocast") for m in ["gpt2-xl", "llama-3.2-1b"]]
    cases += [i("--model", "llama-3.2-1b", "--gpu", "h100-sxm", "--batch", 16, "--prompt-len", 2048,
                "--inference-api", api) for api in ["generate", "forward-loop"]]
    return cases


def all_cases() -> list:
    cases = (training_precision() + training_kernels() + training_zero() + training_parallel() + training_moe()
             + training_gpus() + training_instances() + training_network() + training_budget() + training_models()
             + inference() + finetune())
    cases = [c + ["--json"] for c in cases]
    seen = set()
    for c in cases:
        key = tuple(c)
        if key in seen:
            raise SystemExit(f"make_golden: duplicate case: {' '.join(c)}")
        seen.add(key)
    return cases


def run_case(argv: list, main) -> dict:
    """Run one case in-process; its parsed JSON, or SystemExit naming the case."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as e:  # argparse errors exit
            rc = e.code
    if rc != 0:
        raise SystemExit(f"make_golden: exit {rc}: {' '.join(argv)}\n{err.getvalue().strip()}")
    return json.loads(out.getvalue())


def commit_hash() -> str:
    """HEAD, with ``+dirty`` when the engine's code or data differ from it."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "planner_app", "spec_data"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.strip()
    return head + ("+dirty" if dirty else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=OUT)
    opts = ap.parse_args()
    os.environ["PLANNER_USER_DIR"] = tempfile.mkdtemp(prefix="planner-golden-")
    os.chdir(ROOT)
    from planner_app.cli import main as cli_main

    cases = [{"argv": argv, "result": run_case(argv, cli_main)} for argv in all_cases()]
    doc = {"command": "python benchmarks/make_golden.py", "made_at": commit_hash(), "cases": cases}
    with open(opts.output, "w", encoding="utf-8") as f:
        json.dump(doc, f, sort_keys=True, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    print(f"{len(cases)} cases -> {os.path.relpath(opts.output, ROOT)} ({os.path.getsize(opts.output) / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
