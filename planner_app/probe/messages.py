"""The worker's JSON-line messages and their schemas (checked by the runner before anything
reaches a verdict, the GUI or a calibration profile): ``{"type": "progress", "fraction",
"text"}``, ``{"type": "result", "result": {...}}`` and ``{"type": "error", "message"}``. A
result is checked against its task's schema: measured rates and sizes must be finite and
non-negative, so a NaN or negative bandwidth from a broken backend is refused here."""
from __future__ import annotations

import math


class MessageError(ValueError):
    """A message breaks its schema; ``kind`` is the message type, ``str()`` names the field."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


def _need(kind, where, ok, what):
    if not ok:
        raise MessageError(kind, f"{where} must be {what}")


def _num(kind, where, v, lo=0.0, hi=None, above=False):
    ok = not isinstance(v, bool) and isinstance(v, (int, float)) \
        and (not isinstance(v, float) or math.isfinite(v)) \
        and (v > lo if above else v >= lo) and (hi is None or v <= hi)
    rng = f"{'above' if above else 'at least'} {lo:g}" + (f" and at most {hi:g}" if hi is not None else "")
    _need(kind, where, ok, f"a finite number {rng}")
    return v


def _text(kind, where, v, max_len=100_000):
    _need(kind, where, isinstance(v, str) and len(v) <= max_len, "text")
    return v


def _list_of_dicts(kind, where, v):
    _need(kind, where, isinstance(v, list) and all(isinstance(x, dict) for x in v), "a list of objects")
    return v


# Rates above these are no measurement of a real device (spec_data/gpus.csv: the fastest
# dense rate is below 20,000 TFLOP/s, HBM below 100,000 GB/s); a garbage timer gives such values.
MAX_TFLOPS = 1e5
MAX_GBPS = 1e6


def check_bench(r: dict) -> dict:
    k = "result"
    _need(k, "result.device", isinstance(r.get("device"), dict), "an object")
    _text(k, "result.backend", r.get("backend"), 100)
    for i, g in enumerate(_list_of_dicts(k, "result.gemm", r.get("gemm"))):
        _text(k, f"result.gemm[{i}].dtype", g.get("dtype"), 20)
        for dim in ("m", "n", "k"):
            _num(k, f"result.gemm[{i}].{dim}", g.get(dim), 1)
        _num(k, f"result.gemm[{i}].tflops", g.get("tflops"), 0.0, MAX_TFLOPS, above=True)
        if "median_s" in g:
            _num(k, f"result.gemm[{i}].median_s", g["median_s"], 0.0, above=True)
    for i, g in enumerate(_list_of_dicts(k, "result.model_gemm", r.get("model_gemm", []))):
        _text(k, f"result.model_gemm[{i}].dtype", g.get("dtype"), 20)
        for dim in ("m", "n", "k"):
            _num(k, f"result.model_gemm[{i}].{dim}", g.get(dim), 1)
        for t in ("fwd_s", "dgrad_s", "wgrad_s"):  # a calibration curve divides by them
            _num(k, f"result.model_gemm[{i}].{t}", g.get(t), 0.0, above=True)
        _num(k, f"result.model_gemm[{i}].tflops", g.get("tflops"), 0.0, MAX_TFLOPS, above=True)
    for i, b in enumerate(_list_of_dicts(k, "result.bandwidth", r.get("bandwidth"))):
        _text(k, f"result.bandwidth[{i}].kind", b.get("kind"), 40)
        _num(k, f"result.bandwidth[{i}].gbps", b.get("gbps"), 0.0, MAX_GBPS, above=True)
    dispatch = r.get("dispatch")
    if dispatch is not None:  # calibration scales launch_s by it: a positive time below a second
        _need(k, "result.dispatch", isinstance(dispatch, dict), "an object or null")
        _num(k, "result.dispatch.us_per_op", dispatch.get("us_per_op"), 0.0, 1e6, above=True)
    best = r.get("gemm_best_tflops", {})
    _need(k, "result.gemm_best_tflops", isinstance(best, dict), "an object")
    for dtype, v in best.items():
        _num(k, f"result.gemm_best_tflops.{dtype}", v, 0.0, MAX_TFLOPS)
    notes = r.get("notes", [])
    _need(k, "result.notes", isinstance(notes, list) and all(isinstance(n, str) for n in notes), "a list of text")
    return r


def check_validate(r: dict) -> dict:
    k = "result"
    if r.get("oom"):
        return r
    _num(k, "result.peak_abs_bytes", r.get("peak_abs_bytes"), 0.0)
    if "step_ms_median" in r:
        _num(k, "result.step_ms_median", r["step_ms_median"], 0.0)
    return r


def check_inventory(r: dict) -> dict:
    _need("result", "result.nvml", isinstance(r.get("nvml"), dict), "an object")
    _list_of_dicts("result", "result.gpus", r.get("gpus"))
    return r


RESULT_CHECKS = {"bench": check_bench, "validate": check_validate, "inventory": check_inventory}


def check_message(task: str, msg: dict):
    """(kind, payload): ("progress", (fraction, text)), ("result", dict) or ("error", text);
    MessageError naming the field otherwise."""
    kind = msg.get("type")
    if kind == "progress":
        fraction = _num("progress", "fraction", msg.get("fraction", 0.0), 0.0, 1.0)
        return "progress", (float(fraction), _text("progress", "text", msg.get("text", ""), 10_000))
    if kind == "result":
        result = msg.get("result")
        _need("result", "result", isinstance(result, dict) and result, "a non-empty object")
        check = RESULT_CHECKS.get(task)
        return "result", check(result) if check else result
    if kind == "error":
        return "error", _text("error", "message", msg.get("message"), 100_000)[:2000]
    raise MessageError(str(kind)[:40], "type must be progress, result or error")
