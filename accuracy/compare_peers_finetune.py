"""Peer memory calculators side by side with this engine on the measured H200 fine-tuning runs
(issue 14): tests/data/finetune_runs_h200.json (plain-loop full fine-tuning, LoRA, QLoRA) and
tests/data/trainer_runs_h200.json (Hugging Face Trainer runs). Every training case each peer can
express is run through that peer; the output is markdown (docs/peers_finetune.md).

The peers live in their own virtual environment, never in the project's:

    python3 -m venv /tmp/peers-venv
    /tmp/peers-venv/bin/pip install llm-analysis==0.2.2 ftuneai==0.4.1 llmcalculator==0.2.3 \
        ml-memguard==0.5.0 vramcalc==0.1.2
    /tmp/peers-venv/bin/python -m accuracy.compare_peers_finetune > docs/peers_finetune.md

The script imports the peers (accuracy/peer_calculators.py: how each is called and what it was
given; so the peer venv's python runs it, from the repository root) and gets our estimate from
`gpu-planner estimate --json` run by the project's python (PLANNER_PYTHON, default
/work/main/.venv/bin/python, else this python) with PYTHONPATH set to this checkout; the engine's
options for each case are those of accuracy/finetune_accuracy.py (options_for,
trainer_options_for). A peer that is not installed is reported as not found and left out.

Measured = torch.cuda.max_memory_allocated less the cuBLAS workspace (see finetune_accuracy.py);
ours = the engine's peak less CUBLAS_WORKSPACE_BYTES, as finetune_accuracy.py compares it.
Every peer works offline from a config dict or sizes we give it (none downloads anything here).
Rule for "cannot express": the peer has no such method, base format or optimizer family (no LoRA,
no 4-bit base, no 8-bit optimizer, unsupported architecture). Smaller knobs it lacks (adapter
dtype, target set, AdamW implementation, dropout) are run with its nearest input and noted.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import statistics
import subprocess
import sys

from accuracy.finetune_accuracy import options_for, trainer_options_for  # stdlib-only module top
from accuracy.peer_calculators import IMPORTS, INFER_RUNNERS, PEERS, RUNNERS, CannotExpress

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
DATA = os.path.join(ROOT, "tests", "data")
CONFIGS = os.path.join(DATA, "hf_configs")

# ---------------------------------------------------------------- cases

def _targets(lora: dict | None) -> str | None:
    """'qv', 'qkvo' or 'all-linear' for a PEFT target_modules value; Phi-3's fused qkv_proj counts
    as q, k and v (the peers name the attention projections separately)."""
    if not lora:
        return None
    t = lora["target_modules"]
    if t is None:  # PEFT's default for the model type: q_proj and v_proj for the Llama-like ones measured
        return "qv"
    if isinstance(t, str):
        return t
    t = set(t)
    if "qkv_proj" in t:
        t = (t - {"qkv_proj"}) | {"q_proj", "k_proj", "v_proj"}
    short = "".join(m[0] for m in ("q_proj", "k_proj", "v_proj", "o_proj") if m in t)
    if t - {"q_proj", "k_proj", "v_proj", "o_proj"}:
        raise ValueError(f"unexpected target_modules {sorted(t)}")
    return short


def _dense_params(case: dict) -> int:
    """Base parameter count; bitsandbytes' Params4bit holds two 4-bit weights per uint8 element."""
    frozen = case.get("frozen_dtypes") or {}
    if frozen:
        return sum(n * 2 if k.startswith("Params4bit") else n for k, n in frozen.items())
    return case["params"]


def load_generate_cases() -> list[dict]:
    """The Hugging Face generate() runs (bf16 weights and KV cache, SDPA, greedy)."""
    with open(os.path.join(DATA, "finetune_runs_h200.json"), encoding="utf-8") as f:
        plain = json.load(f)["cases"]
    out = []
    for case in plain:
        if not case["name"].startswith("generate"):
            continue
        opts, why = options_for(case)
        if case.get("config_dict"):  # a shape given inline (real widths, fewer layers)
            hf = dict(case["config_dict"])
        else:
            with open(os.path.join(CONFIGS, case["config"] + ".json"), encoding="utf-8") as f:
                hf = json.load(f)
        out.append({"name": case["name"], "hf": hf, "opts": opts, "why_not_ours": why, "measured": case["peak_bytes"],
                    "batch": case["batch"], "prompt": case["prompt_len"], "new": case["new_tokens"],
                    "cache": bool(case.get("use_cache")), "params": case.get("weights_bytes", 0) // 2})
    return out


def load_cases() -> list[dict]:
    """Training cases of both files, normalised; generate() cases are inference and left out."""
    out = []
    with open(os.path.join(DATA, "finetune_runs_h200.json"), encoding="utf-8") as f:
        plain = json.load(f)["cases"]
    with open(os.path.join(DATA, "trainer_runs_h200.json"), encoding="utf-8") as f:
        trainer = [c for c in json.load(f)["cases"] if c["status"] == "ok"]
    for case, is_trainer in [(c, False) for c in plain] + [(c, True) for c in trainer]:
        if case["name"].startswith("generate"):
            continue
        opts, why = trainer_options_for(case) if is_trainer else options_for(case)
        if case.get("config_dict"):  # a shape given inline (real widths, fewer layers)
            hf = dict(case["config_dict"])
        else:
            with open(os.path.join(CONFIGS, case["config"] + ".json"), encoding="utf-8") as f:
                hf = json.load(f)
        lora = case.get("lora")
        out.append({
            "name": case["name"], "hf": hf, "opts": opts, "why_not_ours": why, "measured": case["peak_bytes"],
            "batch": case["micro_batch"], "seq": case["seq_len"],
            "method": ("qlora" if case.get("quant") else "lora") if lora else "full",
            "rank": lora["r"] if lora else None, "targets": _targets(lora),
            # PEFT's prepare_model_for_kbit_training turns gradient checkpointing on
            "gc": bool(case.get("grad_checkpointing") or case.get("prepare_kbit")),
            "prepare": bool(case.get("prepare_kbit")),
            "base": case.get("base_dtype", "bf16" if case.get("recipe") == "bf16" else case.get("recipe")),
            "adapter": case.get("adapter_dtype", "fp32"),  # PEFT's default (autocast_adapter_dtype)
            "optimizer": "adamw-fused" if is_trainer else case["optimizer"],
            "dropout": case.get("lora_dropout") or 0.0, "params": _dense_params(case),
            "trainable": case.get("trainable_params"), "trainer": is_trainer,
        })
    return out


# ---------------------------------------------------------------- ours

def planner_python() -> str:
    p = os.environ.get("PLANNER_PYTHON", "/work/main/.venv/bin/python")
    return p if os.path.exists(p) else sys.executable


def _cli_args(opts: dict) -> list[str]:
    args = []
    for k, v in opts.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            args.append(flag)
        elif v is not False and v is not None:
            args += [flag, str(v)]
    return args


def ours(cases: list[dict]) -> dict[str, float | None]:
    """Our peak less the cuBLAS workspace, by running `gpu-planner estimate --json` for each case
    (None where finetune_accuracy.py says the engine cannot express the case)."""
    py, env = planner_python(), dict(os.environ, PYTHONPATH=ROOT)
    ws = int(subprocess.run([py, "-c", "from planner_app.core.hardware.specs import CUBLAS_WORKSPACE_BYTES as w; print(w)"],
                            env=env, check=True, capture_output=True, text=True, cwd=ROOT).stdout)
    out = {}
    for c in cases:
        if c["opts"] is None:
            out[c["name"]] = None
            continue
        cmd = [py, "-c", "import sys; from planner_app.cli import main; sys.exit(main())", "estimate",
               *_cli_args(c["opts"]), "--json"]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
        if p.returncode == 2:  # the engine refuses what it does not model: listed, not hidden
            out[c["name"]] = None
            c["why_not_ours"] = "refused: " + p.stderr.strip().split("error: ", 1)[-1]
            continue
        if p.returncode != 0:
            raise SystemExit(f"gpu-planner estimate failed for {c['name']}: {p.stderr.strip()}")
        out[c["name"]] = json.loads(p.stdout)["memory"]["peak_bytes"] - ws
    return out


# ---------------------------------------------------------------- report

def _cell(est: float | None, meas: float) -> str:
    return "—" if est is None else f"{est / 1e9:.2f} ({est / meas - 1:+.1%})"


def main() -> int:
    found = {}
    for peer in PEERS:
        try:
            __import__(IMPORTS[peer])
            found[peer] = importlib.metadata.version(peer)
        except ImportError:
            pass
    cases = load_cases()
    our = ours(cases)
    res = {}  # (case, peer) -> (reported, tensor, notes) or str reason
    for c in cases:
        for peer in found:
            try:
                res[c["name"], peer] = RUNNERS[peer](c)
            except CannotExpress as e:
                res[c["name"], peer] = str(e)
    peers = list(found)
    print("# Peer calculators on the H200 fine-tuning runs")
    print()
    print("<!-- generated by: /tmp/peers-venv/bin/python -m accuracy.compare_peers_finetune -->")
    print(f"Peers found: {', '.join(f'{p} {v}' for p, v in found.items()) or 'none'}"
          + (f"; not installed: {', '.join(p for p in PEERS if p not in found)}" if len(found) < len(PEERS) else "")
          + f". Ours: gpu-planner estimate --json ({planner_python()}).")
    print()
    print(f"{len(cases)} training cases; the generate() runs are at the end. GB = 1e9 bytes; "
          "error = estimate / measured - 1.")
    print()
    print("### Tensor memory (comparable to max_memory_allocated)")
    print()
    print("Peers' totals less the overhead each documents as CUDA context, fragmentation or framework "
          "runtime (ftuneai: /1.2; llmcalculator: - its per-workload constant; ml-memguard: - 25% - 400 MiB); "
          "llm-analysis and vramcalc report no overhead in their totals. — = cannot express (reason below).")
    print()
    print("| case | measured GB | ours | " + " | ".join(peers) + " |")
    print("|---|---:|---:|" + "---:|" * len(peers))
    for c in cases:
        cells = [_cell(res[c["name"], p][1] if isinstance(res[c["name"], p], tuple) else None, c["measured"])
                 for p in peers]
        print(f"| {c['name']} | {c['measured'] / 1e9:.2f} | {_cell(our[c['name']], c['measured'])} | "
              + " | ".join(cells) + " |")
    print()
    with_overhead = [p for p in peers if p in ("ftuneai", "llmcalculator", "ml-memguard")]
    if with_overhead:
        print("### As the peers report it (their total, overhead included)")
        print()
        print("| case | measured GB | " + " | ".join(with_overhead) + " |")
        print("|---|---:|" + "---:|" * len(with_overhead))
        for c in cases:
            cells = [_cell(res[c["name"], p][0] if isinstance(res[c["name"], p], tuple) else None, c["measured"])
                     for p in with_overhead]
            print(f"| {c['name']} | {c['measured'] / 1e9:.2f} | " + " | ".join(cells) + " |")
        print()
    print("### What each peer could not express, per case")
    print()
    print("| case | our options | " + " | ".join(peers) + " |")
    print("|---|---|" + "---|" * len(peers))
    for c in cases:
        cells = []
        for p in peers:
            r = res[c["name"], p]
            cells.append(f"cannot: {r}" if isinstance(r, str) else "; ".join(r[2]) or "")
        o = c["opts"]
        if our[c["name"]] is None:
            print(f"| {c['name']} | cannot: {c['why_not_ours']} | " + " | ".join(cells) + " |")
            continue
        desc = f"{o.get('finetune', 'full')} {o['recipe']} {o['optimizer']}/{o['optimizer_impl']}"
        if o.get("lora_rank"):
            desc += f" r{o['lora_rank']} {o['lora_targets']}"
        desc += " GC" if o["recompute"] == "full" else ""
        desc += " prep" if o.get("qlora_prepare") else ""
        print(f"| {c['name']} | {desc} | " + " | ".join(cells) + " |")
    print()
    summary(cases, our, res, peers, found, "all training cases")
    # the engine's LoRA/QLoRA model was written against finetune_runs_h200.json; the Trainer runs came after
    # and set no constant (accuracy/finetune_accuracy.py), so they are the out-of-sample check for ours
    summary([c for c in cases if c["trainer"]], our, res, peers, found,
            "Trainer runs only (not used to build the engine)")
    print()
    generate_section(found)
    return 0


def summary(cases, our, res, peers, found, title) -> None:
    print(f"### Summary, {title}: median and largest |error| on the cases each peer expresses; ours on the same cases")
    print()
    print("| peer | cases | peer tensor memory | peer as reported | ours on those cases |")
    print("|---|---:|---|---|---|")
    ours_all = [abs(our[c["name"]] / c["measured"] - 1) for c in cases if our[c["name"]] is not None]
    print(f"| ours (gpu-planner) | {len(ours_all)} of {len(cases)} | {statistics.median(ours_all):.1%}, "
          f"{max(ours_all):.1%} | same | |")
    for p in peers:
        got = [(c, res[c["name"], p]) for c in cases if isinstance(res[c["name"], p], tuple)]
        if not got:
            print(f"| {p} {found[p]} | 0 | | | |")
            continue
        t = [abs(r[1] / c["measured"] - 1) for c, r in got]
        a = [abs(r[0] / c["measured"] - 1) for c, r in got]
        o = [abs(our[c["name"]] / c["measured"] - 1) for c, _ in got if our[c["name"]] is not None]
        print(f"| {p} {found[p]} | {len(got)} | {statistics.median(t):.1%}, {max(t):.1%} | "
              f"{statistics.median(a):.1%}, {max(a):.1%} | {statistics.median(o):.1%}, {max(o):.1%}"
              + ("" if len(o) == len(got) else f" ({len(o)} of them)") + " |")
    print()


def generate_section(found: dict) -> None:
    cases = load_generate_cases()
    our = ours(cases)
    peers = [p for p in found if p in INFER_RUNNERS]
    res = {}
    for c in cases:
        for p in peers:
            try:
                res[c["name"], p] = INFER_RUNNERS[p](c)
            except CannotExpress as e:
                res[c["name"], p] = str(e)
    print("## generate() runs (inference)")
    print()
    print(f"{len(cases)} Hugging Face generate() runs (bf16, SDPA, greedy, 64 new tokens; peers get context = prompt + "
          "new tokens). Cells: tensor memory (overhead removed as above), then the peer's own total where it "
          "differs. ftuneai has no inference estimate.")
    print()
    print("| case | measured GB | ours | " + " | ".join(peers) + " |")
    print("|---|---:|---:|" + "---:|" * len(peers))
    notes = {}
    for c in cases:
        cells = []
        for p in peers:
            r = res[c["name"], p]
            if isinstance(r, str):
                cells.append("—")
                notes.setdefault(p, set()).add("cannot: " + r)
                continue
            cell = _cell(r[1], c["measured"])
            if r[0] != r[1]:
                cell += f"; own total {_cell(r[0], c['measured'])}"
            cells.append(cell)
            notes.setdefault(p, set()).update(r[2])
        o = our[c["name"]]
        print(f"| {c['name']} | {c['measured'] / 1e9:.2f} | "
              + (_cell(o, c["measured"]) if o is not None else "—") + " | " + " | ".join(cells) + " |")
    print()
    why = sorted({c["why_not_ours"] for c in cases if our[c["name"]] is None})
    print(f"- ours: {'; '.join('cannot: ' + w for w in why) or 'all'}")
    for p in peers:
        print(f"- {p}: {'; '.join(sorted(notes.get(p, ())))}")


if __name__ == "__main__":
    sys.exit(main())
