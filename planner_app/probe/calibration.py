"""Calibration profiles: probe results saved under a name; when selected they replace the
engine's default efficiencies (GEMM efficiency per precision from the measured rate-vs-FLOPs
curve, memory-bound kernel efficiency scaled by the measured copy bandwidth over the reference
H200's, intra/inter-node bus
bandwidth from a collective probe).

GEMMs: when the probe measured GEMMs at model shapes (``model_gemm`` rows: a linear layer's
forward, data- and weight-gradient GEMMs at the plan's tokens x layer widths, run back to
back at sustained clocks), the profile carries their efficiency curve; otherwise only the
default e_max scaled by the isolated square sweep's best over the reference H200's. The
isolated rate itself overstates what a training step gets (H200: 8192^3 alone 785 TFLOP/s,
tests/data/probe_h200.json; the engine's default, fitted to whole training steps, is 0.72 of
989): used as e_max it made every validated H200 step 5-9% too fast (docs/validation.md).

The rule: a profile never moves a validated run's step time away from its measurement. When
``probe --validate`` runs exist for the profile's GPU (``guard_profile``), the profile is kept
as measured if no validated run ends further from its measurement than without it; otherwise
its GEMM curve and bandwidth are moved back toward the defaults by the least fraction that
leaves every validated run at least as close as the defaults do (all the way: discarded).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from planner_app.core.errors import InputError
from planner_app.core.hardware.compute import Efficiency, default_efficiency
from planner_app.core.text import QT_TRANSLATE_NOOP, Text, TextList
from planner_app.probe.messages import MessageError, check_bench
from planner_app.specdb.catalog import shipped_db
from planner_app.specdb.schema import SpecDataError

DTYPE_BITS = {"bf16": 16, "fp16": 16, "fp32": 32, "fp8": 8}
GUARD_STEPS = 20
# The probe's 2 GiB fp32 copy on the H200 the defaults were measured on: 4214 GB/s read+write of
# the 4800 GB/s datasheet (tests/data/probe_reference_h200.json, benchmarks/gpu/probe_reference.py;
# the probe itself measured 4028 and 4206 there: tests/data/probe_h200.json,
# probe_calibration_h200.json). The engine's memory-bound efficiency (0.78 of HBM) is what the
# kernels of a training step get, less than such a copy: a profile scales it by the measured copy
# over this reference, rather than replacing it with the copy's fraction (which made every H200
# step 2-5% too fast: docs/validation.md, "Calibration").
REFERENCE_COPY_FRACTION = 4214.19 / 4800.0
# Host time per eager PyTorch op of the probe's dispatch test (bench.py TorchBackend.dispatch) on the
# machine the eager framework's launch_s was measured on (compute.FRAMEWORK_LAUNCH_S: H200, 16-core
# Xeon): 9.1 us, median of 5 runs of 7 (9.0-13.3; tests/data/dispatch_h200.json). A profile scales
# launch_s by the host it was probed on against this.
REFERENCE_DISPATCH_US_PER_OP = 9.1
# Its best isolated bf16 GEMM (8192^3): 785.8 TFLOP/s of 989 (the same file).
REFERENCE_GEMM_FRACTION = 785.81 / 989.0  # the fraction kept is searched from 1 down to 0 in steps of 1/GUARD_STEPS


@dataclass
class CalibrationProfile:
    name: str
    device: str
    gpu_id: str | None
    efficiency: Efficiency
    intra_busbw_gb_s: float | None = None
    inter_busbw_gb_s: float | None = None
    created: str = ""
    gemm_source: str = "square"  # "model": sustained model-shaped GEMMs; "square": isolated square sweep
    kept_fraction: float | None = None  # set by guard_profile: 1 kept, 0 discarded, None not checked
    checks: list = field(default_factory=list)  # guard_profile's per-run errors
    dispatch_us_per_op: float | None = None  # the probe's eager dispatch test (bench.py), when it ran

    def summary(self) -> Text:
        e = self.efficiency
        parts = []
        for bits, _xs, es in e.gemm_curves:
            if bits == 16:
                parts.append(Text(QT_TRANSLATE_NOOP("Engine", "16-bit GEMMs {lo:.0%}-{hi:.0%} of peak at the "
                                                              "models' shapes, sustained"), lo=min(es), hi=max(es)))
        if not e.gemm_curves:
            parts.append(Text(QT_TRANSLATE_NOOP("Engine", "GEMM {gemm:.0%} of peak, +{us:.0f} us per GEMM"),
                              gemm=e.gemm_max, us=e.gemm_overhead_s * 1e6))
        parts.append(Text(QT_TRANSLATE_NOOP("Engine", "memory-bound kernels {bw:.0%} of HBM bandwidth"),
                          bw=e.bw_elementwise))
        if self.dispatch_us_per_op:
            parts.append(Text(QT_TRANSLATE_NOOP("Engine", "eager dispatch {us:.1f} us per op on the host "
                                                          "({ratio:.2f}x the reference host)"),
                              us=self.dispatch_us_per_op, ratio=self.dispatch_us_per_op / REFERENCE_DISPATCH_US_PER_OP))
        if self.intra_busbw_gb_s:
            parts.append(Text(QT_TRANSLATE_NOOP("Engine", "intra-node bus bandwidth {gb_s:.0f} GB/s"),
                              gb_s=self.intra_busbw_gb_s))
        parts.append(self.guard_text())
        return Text(QT_TRANSLATE_NOOP("Engine", "measured on {device} {date}: {parts}"), device=self.device,
                    date=self.created, parts=TextList(QT_TRANSLATE_NOOP("Engine", ", "), parts))

    def guard_text(self) -> Text:
        """What the never-worse rule did with this profile."""
        n = len(self.checks)
        if self.kept_fraction is None:
            return Text(QT_TRANSLATE_NOOP("Engine", "no validated run on this GPU to check it against (rule: a profile "
                                                    "never moves a validated run's step time away from its "
                                                    "measurement)"))
        if self.kept_fraction >= 1.0:
            return Text(QT_TRANSLATE_NOOP("Engine", "kept as measured: it moves none of {n} validated run(s) away "
                                                    "from the measured step time"), n=n)
        if self.kept_fraction <= 0.0:
            return Text(QT_TRANSLATE_NOOP("Engine", "GEMM and bandwidth terms discarded (defaults used): any part of "
                                                    "them moves one of {n} validated run(s) away from the measured "
                                                    "step time"), n=n)
        return Text(QT_TRANSLATE_NOOP("Engine", "GEMM and bandwidth terms moved {pct:.0%} back toward the defaults, "
                                                "so that none of {n} validated run(s) is further from its measured "
                                                "step time than without the profile"),
                    pct=1.0 - self.kept_fraction, n=n)


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


def efficiency_curve(points: list[tuple[float, float]], peak_tflops: float) -> tuple[tuple, tuple]:
    """(log FLOPs, efficiency) of measured (FLOPs, seconds) points, increasing in FLOPs; points
    of equal FLOPs (within 0.1%) are pooled (their times summed over their FLOPs)."""
    pooled: list[list[float]] = []
    for f, t in sorted(points):
        if pooled and f <= pooled[-1][0] * 1.001:
            pooled[-1][1] += f
            pooled[-1][2] += t
        else:
            pooled.append([f, f, t])
    xs = tuple(math.log(f0) for f0, _, _ in pooled)
    es = tuple(min(max(fs / (tt * peak_tflops * 1e12), 1e-3), 1.0) for _, fs, tt in pooled)
    return xs, es


def model_gemm_points(rows: list[dict]) -> list[tuple[float, float]]:
    """(FLOPs of one GEMM, seconds) per model-shaped row: 2MNK and the mean of the forward, data
    gradient and weight gradient GEMMs, the three the engine charges for one linear layer (3 x
    the forward's time: core/hardware/compute.py ``layer_time``)."""
    return [(2.0 * r["m"] * r["n"] * r["k"], (r["fwd_s"] + r["dgrad_s"] + r["wgrad_s"]) / 3) for r in rows]


def gemm_curves_from_result(result: dict, gpu) -> tuple[tuple, str]:
    """(Efficiency.gemm_curves, source) of a probe result's model-shaped rows, per precision
    measured; ((), "square") when it has none (an older probe, or a backend without them)."""
    curves = []
    model_rows = result.get("model_gemm", [])
    for dtype in ("bf16", "fp16", "fp32", "fp8"):
        bits = DTYPE_BITS[dtype]
        rows = [r for r in model_rows if r["dtype"] == dtype]
        if not rows or any(c[0] == bits for c in curves):
            continue
        peak = gpu.peak_tflops(bits, dtype) if bits == 16 else _peak_or_none(gpu, bits)
        if peak:
            xs, es = efficiency_curve(model_gemm_points(rows), peak)
            curves.append((bits, xs, es))
    return tuple(curves), "model" if curves else "square"


def square_gemm_max(result: dict, gpu, base: Efficiency) -> float | None:
    """Without model-shaped rows: the default e_max scaled by the best isolated 16-bit square
    GEMM's fraction of peak over the reference H200's (REFERENCE_GEMM_FRACTION); the isolated
    rate itself overstates a training step's GEMMs (module docstring)."""
    for dtype in ("bf16", "fp16"):
        rows = [r for r in result.get("gemm", []) if r["dtype"] == dtype]
        peak = gpu.peak_tflops(16, dtype)
        if rows and peak:
            best = max(r["tflops"] for r in rows)
            return min(base.gemm_max * (best / peak) / REFERENCE_GEMM_FRACTION, 1.0)
    return None


def _peak_or_none(gpu, bits):
    try:
        return gpu.peak_tflops(bits)
    except InputError:
        return None


def _check_measurements(name: str, result: dict, collectives: dict | None) -> None:
    """The measurements a profile is built from pass the same checks as when they arrived
    (a worker's result, a collectives file): a NaN or negative rate never reaches the engine,
    also from a profile saved before those checks existed."""
    from planner_app.probe.cluster import check_result  # lazy: keeps the cluster probe (~5 ms) off estimate's start

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
    curves, source = gemm_curves_from_result(result, gpu) if result.get("device", {}).get("kind") != "cpu" \
        else ((), "square")
    if curves:
        changes["gemm_curves"] = curves
    elif result.get("device", {}).get("kind") != "cpu":
        e_max = square_gemm_max(result, gpu, base)
        if e_max:
            changes["gemm_max"] = e_max
    copy = next((b for b in result.get("bandwidth", []) if b["kind"] == "copy"), None)
    if copy and gpu.mem_bw_gb_s and result.get("device", {}).get("kind") != "cpu":
        # relative to the copy the defaults are anchored to (REFERENCE_COPY_FRACTION)
        frac = min(base.bw_elementwise * (copy["gbps"] / gpu.mem_bw_gb_s) / REFERENCE_COPY_FRACTION, 1.0)
        changes["bw_elementwise"] = frac
        changes["bw_reduction"] = frac * base.bw_reduction / base.bw_elementwise
    dispatch = result.get("dispatch") or {}
    if dispatch.get("us_per_op"):  # eager dispatch: a faster or slower host than the reference's
        changes["launch_s"] = base.launch_s * dispatch["us_per_op"] / REFERENCE_DISPATCH_US_PER_OP
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
                              inter_busbw_gb_s=inter, gemm_source=source,
                              dispatch_us_per_op=dispatch.get("us_per_op"))


def blend_efficiency(base: Efficiency, measured: Efficiency, keep: float, gpu) -> Efficiency:
    """``measured`` moved back toward ``base``: every GEMM-curve point's time, the GEMM law's time
    per FLOP and overhead, and the bandwidth terms' time per byte become base + keep x (measured -
    base); keep 0 gives ``base``'s GEMM law and bandwidths (the curve dropped), 1 ``measured``."""
    if keep >= 1.0:
        return measured
    if keep <= 0.0:
        return measured.with_changes(gemm_curves=(), gemm_max=base.gemm_max, gemm_overhead_s=base.gemm_overhead_s,
                                     bw_elementwise=base.bw_elementwise, bw_reduction=base.bw_reduction,
                                     launch_s=base.launch_s)
    curves = []
    for bits, xs, es in measured.gemm_curves:
        peak = _peak_or_none(gpu, bits) or 1.0
        new = []
        for x, e in zip(xs, es):
            f = math.exp(x)
            t_base = f / (peak * 1e12 * base.gemm_max) + base.gemm_overhead_s
            t_meas = f / (peak * 1e12 * e)
            new.append(f / (peak * 1e12 * (t_base + keep * (t_meas - t_base))))
        curves.append((bits, xs, tuple(new)))

    def rate(b, m):  # time per unit of work blended: 1/x' = 1/b + keep x (1/m - 1/b)
        return 1.0 / (1.0 / b + keep * (1.0 / m - 1.0 / b))
    return measured.with_changes(gemm_curves=tuple(curves), gemm_max=rate(base.gemm_max, measured.gemm_max),
                                 gemm_overhead_s=base.gemm_overhead_s + keep * (measured.gemm_overhead_s
                                                                               - base.gemm_overhead_s),
                                 bw_elementwise=rate(base.bw_elementwise, measured.bw_elementwise),
                                 bw_reduction=rate(base.bw_reduction, measured.bw_reduction),
                                 launch_s=base.launch_s + keep * (measured.launch_s - base.launch_s))


def guard_profile(profile: CalibrationProfile, gpu, cases: list[dict], framework: str = "pytorch") -> CalibrationProfile:
    """Apply the never-worse rule (module docstring) in place and return the profile.

    ``cases``: validated runs on this GPU, each {"label", "measured_s", "step_s"} where
    ``step_s(efficiency)`` is the engine's step time of that run with the given efficiencies.
    ``profile.checks`` gets, per run, the error without the profile, with the profile as
    measured, and with the profile as kept."""
    if not cases:
        return profile
    base = default_efficiency(gpu, framework)
    measured = profile.efficiency

    def errors(eff):
        return [c["step_s"](eff) / c["measured_s"] - 1.0 for c in cases]

    err_base, err_meas = errors(base), errors(measured)
    keep, err_kept = 0.0, err_base
    for i in range(GUARD_STEPS, 0, -1):
        k = i / GUARD_STEPS
        errs = err_meas if k == 1.0 else errors(blend_efficiency(base, measured, k, gpu))
        if all(abs(e) <= abs(b) + 1e-12 for e, b in zip(errs, err_base)):
            keep, err_kept = k, errs
            break
    profile.efficiency = blend_efficiency(base, measured, keep, gpu)
    profile.kept_fraction = keep
    profile.checks = [{"label": c["label"], "measured_s": c["measured_s"], "error_without": b, "error_measured": m,
                       "error_kept": k} for c, b, m, k in zip(cases, err_base, err_meas, err_kept)]
    return profile


def read_profile(name: str, userdb=None, specdb=None):
    """A saved profile by name from the user's database as measured (the never-worse rule is the
    service's: service/calibration.py), with its GPU and the validated runs stored for that GPU:
    (profile, gpu, runs, key), ``key`` telling this profile and set of runs from any other."""
    from planner_app.specdb.userdb import UserDB  # lazy: sqlite3 is optional (a Python built without it)

    udb = userdb or UserDB.open_default()
    try:
        rec = udb.profile(name)
        damaged = [p for p in udb.problems if f"calibration profile {name!r}" in p]
        names = [p["name"] for p in udb.profiles()] if rec is None and not damaged else []
        gpu_of_rec = rec["gpu_id"] if rec is not None else None
        runs = udb.validations(gpu_of_rec) if gpu_of_rec else []  # read before the close
        db_path = str(getattr(udb, "path", id(udb)))
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
    if gpu.id != gpu_of_rec:  # the stored runs are keyed by the profile's GPU id
        runs = []
    key = (db_path, name, rec["created"], len(runs), runs[-1]["created"] if runs else "")
    return p, gpu, runs, key

