"""What the serving step charges for one MoE block's prompt chunk, against the block measured on the H200
(``tests/data/moe_prefill_h200.json``, ``benchmarks/gpu/gpu_moe_prefill.py``): the routed experts' grouped GEMMs
(compute.grouped_gemm_time_s, as core/serving/engine.py step_parts calls it) and the block's other work (routing,
the rows' dispatch and combine, the activation: the element-wise traffic ``act_moe``), each against the
measured stages (BF16). Prints ratios estimate / measured; nothing is fitted here.

    python -m accuracy.moe_prefill_accuracy
"""
from __future__ import annotations

import json
import os
import statistics

from planner_app.core.hardware import compute
from planner_app.core.serving import engine as sv
from planner_app.service.resolve import resolve_hardware
from planner_app.specdb.catalog import shipped_db

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(ROOT, "tests", "data", "moe_prefill_h200.json")
GEMM_STAGES = ("gate_up", "down")
OTHER_STAGES = ("router", "sort", "gather", "act", "combine")


def charge_s(p: dict, dev) -> dict:
    """The step's charge for one MoE layer of point ``p`` (one GPU holding a tp-slice of every expert)."""
    h, f, E, k, T = p["hidden"], p["expert_ffn"], p["experts"], p["top_k"], p["tokens"]
    tp = int(p["shape"].split("/tp")[1]) if "/tp" in p["shape"] else 1
    touched = E * sv.experts_touched_fraction(T, k, E)
    eff0 = dev.eff.with_changes(gemm_overhead_s=0.0)
    gemm = compute.grouped_gemm_time_s(touched * 3 * h * f * 2.0, 2.0 * T * k * 3 * h * f, T * k / touched,
                                       dev.gemm_peak_tflops, eff0, dev.mem_bw_gb_s, calls=2.0,
                                       call_s=compute.GROUPED_GEMM_CALL_S - sv.KERNEL_FLOOR_S)
    gemm += 2 * sv.KERNEL_FLOOR_S
    bw = dev.mem_bw_gb_s * 1e9 * dev.eff.bw_elementwise
    # act_traffic's routed part for one layer and token (SwiGLU: 3 activation elements per row of the full
    # expert width), split max(tp, ep) ways as step_parts splits it
    other = sv.ACT_BYTES * T * (2 * (1 + k) * h + 3 * k * f * tp) / tp / bw
    return {"gemm": float(gemm), "other": float(other)}


def main():
    data = json.load(open(DATA))
    db = shipped_db()
    hw, per_node, _ = resolve_hardware(db, gpu="h200-sxm", instance=None, calibration=None)
    dev = sv.device_for(hw, 16, per_node)
    print(f"Source: {os.path.relpath(DATA, ROOT)} ({data['info']['device']}, torch {data['info']['torch']}, "
          f"{data['info']['date']})\n")
    print("| shape | tokens | GEMMs measured / charged ms | other measured / charged ms | block measured / "
          "charged ms |")
    print("|---|---:|---:|---:|---:|")
    ratios = {"gemm": [], "other": [], "block": []}
    for p in data["points"]:
        st = p.get("stages_bf16_ms")
        if not st:
            continue
        c = charge_s(p, dev)
        m_gemm = sum(st[s] for s in GEMM_STAGES)
        m_other = sum(st[s] for s in OTHER_STAGES)
        e_gemm, e_other = c["gemm"] * 1e3, c["other"] * 1e3
        for key, m, e in (("gemm", m_gemm, e_gemm), ("other", m_other, e_other),
                          ("block", m_gemm + m_other, e_gemm + e_other)):
            ratios[key].append(e / m)
        print(f"| {p['shape']} | {p['tokens']:,} | {m_gemm:.2f} / {e_gemm:.2f} | {m_other:.2f} / {e_other:.2f} | "
              f"{m_gemm + m_other:.2f} / {e_gemm + e_other:.2f} |")
    print()
    for key, v in ratios.items():
        print(f"{key}: charged / measured median {statistics.median(v):.2f} (range {min(v):.2f}-{max(v):.2f}, "
              f"{len(v)} points)")


if __name__ == "__main__":
    main()
