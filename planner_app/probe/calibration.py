"""Calibration profiles: probe results saved under a name; when selected they replace the
engine's default efficiencies (GEMM efficiency and per-GEMM overhead from the measured
rate-vs-size curve, memory-bound kernel efficiency from the measured copy bandwidth,
intra/inter-node bus bandwidth from a collective probe)."""
from __future__ import annotations

from dataclasses import dataclass

from planner_app.core.compute import Efficiency, default_efficiency
from planner_app.core.errors import InputError
from planner_app.core.text import QT_TRANSLATE_NOOP, Text, TextList


@dataclass
class CalibrationProfile:
    name: str
    device: str
    gpu_id: str | None
    efficiency: Efficiency
    intra_busbw_gb_s: float | None = None
    inter_busbw_gb_s: float | None = None
    created: str = ""

    def summary(self) -> Text:
        e = self.efficiency
        parts = [Text(QT_TRANSLATE_NOOP("Engine", "GEMM {gemm:.0%} of peak, +{us:.0f} us per GEMM"),
                      gemm=e.gemm_max, us=e.gemm_overhead_s * 1e6),
                 Text(QT_TRANSLATE_NOOP("Engine", "memory-bound kernels {bw:.0%} of HBM bandwidth"),
                      bw=e.bw_elementwise)]
        if self.intra_busbw_gb_s:
            parts.append(Text(QT_TRANSLATE_NOOP("Engine", "intra-node bus bandwidth {gb_s:.0f} GB/s"),
                              gb_s=self.intra_busbw_gb_s))
        return Text(QT_TRANSLATE_NOOP("Engine", "measured on {device} {date}: {parts}"), device=self.device,
                    date=self.created, parts=TextList(QT_TRANSLATE_NOOP("Engine", ", "), parts))


def fit_gemm_curve(rows: list[dict], peak_tflops: float) -> tuple[float, float]:
    """Fit t = F / (peak x e_max) + t0 to the measured (FLOPs, time) points (least squares
    on the large-GEMM points for e_max, the median residual of the rest for t0)."""
    pts = sorted((2.0 * r["m"] * r["n"] * r["k"], r["median_s"]) for r in rows)
    if not pts:
        raise ValueError("no GEMM measurements")
    big = pts[len(pts) // 2:]
    # slope of t against F over the large GEMMs
    mean_f = sum(f for f, _ in big) / len(big)
    mean_t = sum(t for _, t in big) / len(big)
    var = sum((f - mean_f) ** 2 for f, _ in big)
    slope = sum((f - mean_f) * (t - mean_t) for f, t in big) / var if var > 0 else mean_t / mean_f
    best = max(f / t for f, t in pts)
    e_max = min(max(best / (peak_tflops * 1e12), 1e-3), 1.0)
    if slope > 0:
        e_max = min(max(1.0 / (slope * peak_tflops * 1e12), e_max), 1.0)
    resid = sorted(t - f / (peak_tflops * 1e12 * e_max) for f, t in pts)
    t0 = max(resid[len(resid) // 2], 0.0)
    return e_max, t0


def _check_measurements(name: str, result: dict, collectives: dict | None) -> None:
    """The measurements a profile is built from pass the same checks as when they arrived
    (a worker's result, a collectives file): a NaN or negative rate never reaches the engine,
    also from a profile saved before those checks existed."""
    from planner_app.probe.cluster import check_result
    from planner_app.probe.messages import MessageError, check_bench
    from planner_app.specdb.schema import SpecDataError

    try:
        if result.get("gemm") or result.get("bandwidth"):
            check_bench({"device": {}, "backend": "?", "gemm": [], "bandwidth": [], **result})
        if collectives:
            check_result(collectives, f"profile {name!r}")
    except (MessageError, SpecDataError) as e:
        raise InputError("calibration", f"profile {name!r} holds an impossible measurement ({e}); delete it and "
                                        "measure again") from None


def profile_from_result(name: str, result: dict, gpu, framework: str = "pytorch",
                        collectives: dict | None = None) -> CalibrationProfile:
    """Efficiencies measured by a probe run on ``gpu`` (its datasheet row)."""
    _check_measurements(name, result, collectives)
    base = default_efficiency(gpu, framework)
    changes = {"source": f"calibration profile {name!r}"}
    for dtype, attr in (("bf16", "bf16_tflops"), ("fp16", "fp16_tflops")):
        rows = [r for r in result.get("gemm", []) if r["dtype"] == dtype]
        peak = getattr(gpu, attr, 0.0)
        if rows and peak:
            e_max, t0 = fit_gemm_curve(rows, peak)
            changes.update(gemm_max=e_max, gemm_overhead_s=t0)
            break
    copy = next((b for b in result.get("bandwidth", []) if b["kind"] == "copy"), None)
    if copy and gpu.mem_bw_gb_s and result.get("device", {}).get("kind") != "cpu":
        frac = min(copy["gbps"] / gpu.mem_bw_gb_s, 1.0)
        changes["bw_elementwise"] = frac
        changes["bw_reduction"] = frac * base.bw_reduction / base.bw_elementwise
    intra = inter = None
    if collectives:
        rows = [r for r in collectives.get("rows", []) if r["collective"] == "all_reduce"]
        if rows:
            best = max(r["busbw_gb_s"] if "busbw_gb_s" in r else r["busbw_gbps"] for r in rows)
            if ((collectives.get("environment") or {}).get("nodes") or 1) > 1:
                inter = best
            else:
                intra = best
    return CalibrationProfile(name=name, device=result.get("device", {}).get("name", "?"), gpu_id=gpu.id,
                              efficiency=base.with_changes(**changes), intra_busbw_gb_s=intra,
                              inter_busbw_gb_s=inter)


def load_profile(name: str, userdb=None, specdb=None) -> CalibrationProfile:
    """A saved profile by name, from the user's database."""
    from planner_app.specdb.catalog import shipped_db
    from planner_app.specdb.userdb import UserDB

    udb = userdb or UserDB.open_default()
    try:
        rec = udb.profile(name)
        damaged = [p for p in udb.problems if f"calibration profile {name!r}" in p]
        names = [p["name"] for p in udb.profiles()] if rec is None and not damaged else []
    finally:
        if userdb is None:
            udb.close()  # opened here: closed here, not left to the garbage collector
    if rec is None and damaged:
        raise InputError("calibration", damaged[0])
    if rec is None:
        raise InputError("calibration", f"no calibration profile named {name!r}"
                                        + (f"; saved: {', '.join(names)}" if names else
                                           "; save one with gpu-planner probe --save NAME"))
    db = specdb or shipped_db()
    gpu = db.gpu(rec["gpu_id"]) if rec["gpu_id"] else None
    if gpu is None:
        raise InputError("calibration", f"profile {name!r} has no GPU model to compare with")
    res = rec["result"]
    p = profile_from_result(name, res.get("bench", res), gpu, collectives=res.get("collectives"))
    p.created = rec["created"][:10]
    if p.device == "?" and rec.get("device"):
        p.device = rec["device"]
    return p
