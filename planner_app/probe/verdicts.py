"""Judge probe results: measured against the GPU's datasheet row and against what the part
normally reaches; flag throttled clocks, a lowered power limit, a PCIe link below its
maximum."""
from __future__ import annotations

from planner_app.core.hardware.compute import FAMILY_GEMM_MAX, gpu_family

# Device copy bandwidth, read+write, that GPUs normally reach as a fraction of the
# datasheet: H200 measured 3.76-4.16 TB/s of 4.8 (0.78-0.87); A100/H100 STREAM-style
# copies report 0.85-0.9. CPU: no datasheet, no verdict.
TYPICAL_COPY_FRACTION = 0.85
# "normal" when at least this share of the typical fraction is reached
NORMAL_SHARE = 0.90

DTYPE_PEAK = {"fp64": "fp64_tflops", "fp32": "fp32_tflops", "tf32": "tf32_tflops", "bf16": "bf16_tflops",
              "fp16": "fp16_tflops", "fp8": "fp8_tflops"}


def _typical_gemm_fraction(gpu, dtype: str) -> float:
    fam = gpu_family(gpu)
    base = FAMILY_GEMM_MAX.get(fam, 0.72)
    if dtype == "fp8":
        return base * 0.92  # measured on H200: fp8 1391 of 1979 (0.70) vs bf16 0.78
    if dtype in ("fp32", "fp64"):
        return 0.80
    return base


def _peak(gpu, dtype: str) -> float:
    peak = getattr(gpu, DTYPE_PEAK.get(dtype, ""), 0.0) if gpu is not None else 0.0
    if dtype == "fp64" and peak and gpu_family(gpu) in ("ampere", "hopper") and gpu.vendor == "NVIDIA" \
            and gpu.fp64_tflops >= 5:
        # data-centre Ampere/Hopper run fp64 GEMMs on tensor cores at twice the vector rate
        # (A100: 19.5 vs 9.7 TFLOPS; H100/H200 SXM: 67 vs 34, per their datasheets)
        peak *= 2
    return peak


def _rate(tflops: float) -> str:
    return f"{tflops:,.0f} TFLOP/s" if tflops >= 1 else f"{tflops * 1000:,.0f} GFLOP/s"


def gemm_verdicts(result: dict, gpu) -> list[dict]:
    out = []
    for dtype, tflops in sorted(result.get("gemm_best_tflops", {}).items()):
        peak = _peak(gpu, dtype)
        if not peak:
            out.append({"what": f"{dtype} GEMM", "measured": tflops, "unit": "TFLOP/s", "status": "info",
                        "text": f"{dtype} GEMM {_rate(tflops)} (no datasheet figure to compare)"})
            continue
        frac = tflops / peak
        typical = _typical_gemm_fraction(gpu, dtype)
        status = "normal" if frac >= NORMAL_SHARE * typical else "low"
        if frac > 1.05:
            status = "check"  # above the datasheet: sparse peak confusion or a different SKU
        out.append({"what": f"{dtype} GEMM", "measured": tflops, "datasheet": peak, "fraction": frac,
                    "typical_fraction": typical, "unit": "TFLOP/s", "status": status,
                    "text": f"{dtype} GEMM {_rate(tflops)}: {frac:.0%} of datasheet, "
                            + ({"normal": f"normal for {gpu.name} (typical {typical:.0%})",
                                "low": f"below what {gpu.name} normally reaches ({typical:.0%})",
                                "check": "above the datasheet's dense rate: check the GPU model"}[status])})
    return out


def bandwidth_verdicts(result: dict, gpu) -> list[dict]:
    out = []
    for row in result.get("bandwidth", []):
        if row["kind"] == "copy" and gpu is not None and result.get("device", {}).get("kind") != "cpu":
            frac = row["gbps"] / gpu.mem_bw_gb_s
            status = "normal" if frac >= NORMAL_SHARE * TYPICAL_COPY_FRACTION * 0.9 else "low"
            out.append({"what": "device copy", "measured": row["gbps"], "datasheet": gpu.mem_bw_gb_s,
                        "fraction": frac, "unit": "GB/s", "status": status,
                        "text": f"device copy {row['gbps']:,.0f} GB/s (read+write): {frac:.0%} of the "
                                f"{gpu.mem_bw_gb_s:,.0f} GB/s datasheet, " + ("normal" if status == "normal" else "low")})
        elif row["kind"].endswith("_pinned") and gpu is not None and gpu.pcie_gen:
            lane_gb_s = {3: 0.985, 4: 1.969, 5: 3.938, 6: 7.877}.get(gpu.pcie_gen, 1.969)
            nominal = lane_gb_s * (gpu.pcie_lanes or 16)
            frac = row["gbps"] / nominal
            status = "normal" if frac >= 0.6 else "low"
            out.append({"what": row["kind"], "measured": row["gbps"], "datasheet": nominal, "fraction": frac,
                        "unit": "GB/s", "status": status,
                        "text": f"{row['kind'].replace('_', ' ')} {row['gbps']:,.1f} GB/s: {frac:.0%} of PCIe Gen"
                                f"{gpu.pcie_gen} x{gpu.pcie_lanes} ({nominal:.0f} GB/s), "
                                + ("normal" if status == "normal" else "low (check the slot, or a virtualised link)")})
    return out


def nvml_verdicts(inventory: list[dict]) -> list[dict]:
    out = []
    for g in inventory:
        name = f"GPU {g.get('index')}"
        if g.get("throttle_reasons"):
            out.append({"what": f"{name} clocks", "status": "warning",
                        "text": f"{name}: clocks throttled ({', '.join(g['throttle_reasons'])})"})
        pl, pd = g.get("power_limit_w"), g.get("power_limit_default_w")
        if pl and pd and pl < 0.95 * pd:
            out.append({"what": f"{name} power limit", "status": "warning",
                        "text": f"{name}: power limit lowered to {pl:.0f} W (default {pd:.0f} W)"})
        gen, gmax, w, wmax = g.get("pcie_gen"), g.get("pcie_gen_max"), g.get("pcie_width"), g.get("pcie_width_max")
        if gen and gmax and w and wmax and (gen < gmax or w < wmax):
            out.append({"what": f"{name} PCIe link", "status": "warning",
                        "text": f"{name}: PCIe link at Gen{gen} x{w}, below its maximum Gen{gmax} x{wmax} "
                                "(idle GPUs lower the link speed to save power: check under load)"})
    return out


def telemetry_verdicts(result: dict, gpu, inventory: list[dict]) -> list[dict]:
    """One "info" line for an accelerator that NVML (and amdsmi) do not list: Ascend,
    Cambricon, Kunlunxin, Hygon devices, or an NVIDIA GPU without a driver library. No
    telemetry is a state to report, not an error: the clock, power-limit and PCIe-link checks
    (which read NVML) are skipped and the benchmark verdicts still stand. A CPU run has no
    accelerator to report on."""
    dev = result.get("device") or {}
    if inventory or dev.get("kind") == "cpu":
        return []
    name = gpu.name if gpu is not None else (dev.get("name") or "this device")
    vendor = gpu.vendor if gpu is not None else ""
    why = (f"{vendor} accelerators are not visible to NVML" if vendor and vendor not in ("NVIDIA", "AMD")
           else "NVML and amdsmi list no device")
    return [{"what": "telemetry", "status": "info",
             "text": f"no telemetry for {name}: {why}; clock, power-limit and PCIe-link checks skipped"}]


def all_verdicts(result: dict, gpu, inventory: list[dict] | None = None) -> list[dict]:
    return (gemm_verdicts(result, gpu) + bandwidth_verdicts(result, gpu) + nvml_verdicts(inventory or [])
            + telemetry_verdicts(result, gpu, inventory or []))
