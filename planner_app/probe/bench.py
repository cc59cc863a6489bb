"""Microbenchmarks: GEMM rate per precision over sizes and shapes, device memory bandwidth
(copy, triad), pinned host<->device bandwidth; CPU GEMM and bandwidth with numpy.

Backends, in ``auto`` order: torch (CUDA, ROCm through torch.cuda, Apple ``mps``), cupy,
numpy (the CPU, always). GPU timings use device events after warm-up; every figure is
the median of repeated runs with its spread (min, max); inputs are random (zeros run
faster than real data). Bandwidth is reported as bytes read + bytes written per second
(STREAM's convention), with ``convention`` saying so.
Runs inside the probe worker process (``worker.py``), never in the app's process.
"""
from __future__ import annotations

import math
import os
import platform
import statistics
import time

GEMM_SIZES_FULL = (512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384)
GEMM_SIZES_QUICK = (1024, 2048, 4096, 8192)
# transformer-like shapes: (tokens, out, in)
GEMM_SHAPES = ((2048, 4096, 4096), (2048, 11008, 4096), (8192, 4096, 11008), (16384, 8192, 8192),
               (512, 8192, 8192), (4096, 32000, 4096))
# Model-shaped GEMMs measured by default, (M tokens, N out, K in): the linear layers of Llama 3.1
# 8B (hidden 4096, FFN 14336, 8 KV heads of 128, vocabulary 128256) at 4096 tokens and of
# Llama 3.2 1B (2048, 8192, 8 x 64, 128256) at 8192 tokens (HF config.json of each), the sizes
# of a single-GPU fine-tune; a scenario's own shapes are added by the caller (``model_shapes``).
TYPICAL_MODEL_SHAPES = ((4096, 4096, 4096), (4096, 1024, 4096), (4096, 14336, 4096), (4096, 4096, 14336),
                        (4096, 128256, 4096), (8192, 2048, 2048), (8192, 512, 2048), (8192, 8192, 2048),
                        (8192, 2048, 8192), (8192, 128256, 2048))
# Model-shaped GEMMs run back to back, as inside a training step: a warm-up of this long over
# all shapes brings the GPU to its sustained (power-limited) clocks before timing starts (an
# H200 sustains 0.68-0.70 of peak on 16384-size GEMMs against 0.75-0.78 for an isolated 8192
# one: core/hardware/compute.py), then timing rounds over all shapes for at least this long.
MODEL_GEMM_WARM_S = 3.0
MODEL_GEMM_TIMED_S = 3.0
MODEL_GEMM_MIN_ROUNDS = 3
COPY_BYTES = 2 << 30  # 2 GiB: far beyond any L2 (H100/H200: 50-60 MB)
# Host cost of eager PyTorch: an RMSNorm written as Hugging Face writes it (LlamaRMSNorm.forward: cast,
# pow, mean, add, rsqrt, multiply, cast back, weight product: 8 ops) called as an nn.Module on a tiny
# CUDA tensor, so the host, not the GPU, sets the pace; seconds per op over DISPATCH_CALLS calls.
DISPATCH_CALLS = 400
DISPATCH_OPS_PER_CALL = 8


class Cancelled(Exception):
    pass


def _stats(times_s: list[float]) -> dict:
    return {"median_s": statistics.median(times_s), "min_s": min(times_s), "max_s": max(times_s), "reps": len(times_s)}


# ---------------------------------------------------------------------------------- torch
class TorchBackend:
    name = "torch"

    def __init__(self):
        import torch  # lazy: torch is optional (probe backend)

        self.torch = torch
        if torch.cuda.is_available():
            self.device = torch.device("cuda")
            self.kind = "rocm" if getattr(torch.version, "hip", None) else "cuda"
        elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            self.device = torch.device("mps")
            self.kind = "mps"
        else:
            raise RuntimeError("torch is installed but sees no GPU (no CUDA, ROCm or MPS device)")

    def info(self) -> dict:
        t = self.torch
        d = {"backend": "torch", "torch": t.__version__, "kind": self.kind}
        if self.kind in ("cuda", "rocm"):
            p = t.cuda.get_device_properties(0)
            d.update(name=p.name, memory_bytes=p.total_memory, sm_count=p.multi_processor_count,
                     compute_capability=f"{p.major}.{p.minor}", cuda=t.version.cuda, hip=getattr(t.version, "hip", None))
        else:
            d.update(name="Apple GPU (mps)", memory_bytes=None)
        return d

    def sync(self):
        if self.kind == "mps":
            self.torch.mps.synchronize()
        else:
            self.torch.cuda.synchronize()

    def time_fn(self, fn, reps: int, warmup: int = 3) -> list[float]:
        for _ in range(warmup):
            fn()
        self.sync()
        out = []
        if self.kind == "mps":
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                self.sync()
                out.append(time.perf_counter() - t0)
            return out
        t = self.torch
        for _ in range(reps):
            a, b = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) / 1e3)
        return out

    def dtypes(self) -> list[str]:
        names = ["fp32", "tf32", "fp16", "bf16", "fp64"]
        if self.kind == "mps":
            return ["fp32", "fp16", "bf16"]
        if self._fp8_supported():
            names.append("fp8")
        return names

    def _fp8_supported(self) -> bool:
        t = self.torch
        if self.kind != "cuda" or not hasattr(t, "float8_e4m3fn") or not hasattr(t, "_scaled_mm"):
            return False
        major, minor = t.cuda.get_device_capability(0)
        return (major, minor) >= (8, 9)

    def gemm(self, dtype: str, m: int, n: int, k: int, reps: int) -> list[float]:
        t = self.torch
        dev = self.device
        if self.kind == "cuda":
            t.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        if dtype == "fp8":
            a = t.randn(m, k, device=dev, dtype=t.bfloat16).to(t.float8_e4m3fn)
            b = t.randn(n, k, device=dev, dtype=t.bfloat16).to(t.float8_e4m3fn).t()  # column-major second operand
            one = t.tensor(1.0, device=dev)
            fn = lambda: t._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=t.bfloat16)  # noqa: E731
        else:
            tdt = {"fp32": t.float32, "tf32": t.float32, "fp16": t.float16, "bf16": t.bfloat16, "fp64": t.float64}[dtype]
            a = t.randn(m, k, device=dev, dtype=tdt)
            b = t.randn(k, n, device=dev, dtype=tdt)
            fn = lambda: t.matmul(a, b)  # noqa: E731
        try:
            return self.time_fn(fn, reps)
        finally:
            if self.kind == "cuda":
                t.backends.cuda.matmul.allow_tf32 = False
            a = b = None  # drop the references (a closure above still names them)

    def model_gemms(self, dtype: str, shapes, warm_s: float, timed_s: float, min_rounds: int) -> list[dict]:
        """A linear layer's three GEMMs per (M, N, K) shape, as autograd runs them: forward
        ``x @ W^T`` (F.linear), data gradient ``dY @ W``, weight gradient ``dY^T @ X``; all shapes
        round-robin (warm-up ``warm_s``, then timed rounds for ``timed_s``), and the bandwidth of
        a 16-bit elementwise product over each shape's M x N activation (``model_elementwise``)."""
        t = self.torch
        F = t.nn.functional
        tdt = {"fp16": t.float16, "bf16": t.bfloat16}[dtype]
        ops = []  # (shape index, op name, fn, calls per timing)
        for i, (m, n, k) in enumerate(shapes):
            x, w, dy = (t.randn(m, k, device=self.device, dtype=tdt), t.randn(n, k, device=self.device, dtype=tdt),
                        t.randn(m, n, device=self.device, dtype=tdt))
            out = t.empty_like(dy)
            # enough calls per timed interval (~300 us at ~600 TFLOP/s) that launch gaps do not count
            calls = min(64, max(1, math.ceil(300e-6 / (2.0 * m * n * k / 600e12))))
            ops += [(i, "fwd_s", lambda x=x, w=w: F.linear(x, w), calls),
                    (i, "dgrad_s", lambda dy=dy, w=w: dy @ w, calls),
                    (i, "wgrad_s", lambda dy=dy, x=x: dy.t() @ x, calls),
                    # a 16-bit elementwise op on the activation (read 1, write 1), as a copy: ~3.7 TB/s
                    (i, "elementwise_s", lambda dy=dy, o=out: t.mul(dy, 2.0, out=o),
                     min(64, max(1, math.ceil(300e-6 / (2 * 2.0 * m * n / 3.7e12)))))]
        filler = max(ops, key=lambda o: shapes[o[0]][0] * shapes[o[0]][1] * shapes[o[0]][2])[2]
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < warm_s:
            for _, _, fn, _ in ops:
                fn()
            self.sync()
        filler()  # the queue runs ahead of the first timed call: no idle gap inside an interval
        evs, t0, rounds = [], time.perf_counter(), 0
        while rounds < min_rounds or time.perf_counter() - t0 < timed_s:
            for j, (_, _, fn, calls) in enumerate(ops):
                a, b = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
                a.record()
                for _ in range(calls):
                    fn()
                b.record()
                evs.append((j, a, b))
            rounds += 1
        self.sync()
        times = [[] for _ in ops]
        for j, a, b in evs:
            times[j].append(a.elapsed_time(b) / 1e3 / ops[j][3])
        del ops, filler
        rows = [{"dtype": dtype, "m": m, "n": n, "k": k, "rounds": rounds, "sustained": True} for m, n, k in shapes]
        for j, ts in enumerate(times):
            rows[j // 4][("fwd_s", "dgrad_s", "wgrad_s", "elementwise_s")[j % 4]] = statistics.median(ts)
        for r in rows:
            m, n, k = r["m"], r["n"], r["k"]
            r["tflops"] = 3 * 2.0 * m * n * k / (r["fwd_s"] + r["dgrad_s"] + r["wgrad_s"]) / 1e12
            r["elementwise_gbps"] = 2 * 2.0 * m * n / r["elementwise_s"] / 1e9  # read + write, 2 bytes each (STREAM)
        return rows

    def copy(self, nbytes: int, reps: int) -> list[float]:
        t = self.torch
        n = nbytes // 4
        src = t.randn(n, device=self.device)
        dst = t.empty_like(src)
        try:
            return self.time_fn(lambda: dst.copy_(src), reps)
        finally:
            src = dst = None  # drop the references (a closure above still names them)

    def triad(self, nbytes: int, reps: int) -> list[float]:
        t = self.torch
        n = nbytes // 4
        b, c = t.randn(n, device=self.device), t.randn(n, device=self.device)
        a = t.empty_like(b)
        try:
            return self.time_fn(lambda: t.add(b, c, alpha=3.0, out=a), reps)
        finally:
            a = b = c = None  # drop the references (a closure above still names them)

    def host_device(self, nbytes: int, reps: int, to_device: bool) -> list[float]:
        t = self.torch
        if self.kind == "mps":
            host = t.empty(nbytes // 4, dtype=t.float32)
        else:
            host = t.empty(nbytes // 4, dtype=t.float32, pin_memory=True)
        dev = t.empty(nbytes // 4, dtype=t.float32, device=self.device)
        fn = (lambda: dev.copy_(host, non_blocking=True)) if to_device else (lambda: host.copy_(dev, non_blocking=True))
        try:
            return self.time_fn(fn, reps)
        finally:
            host = dev = None  # drop the references (a closure above still names them)

    def dispatch(self, reps: int) -> list[float]:
        """Seconds of host time per eager op (DISPATCH_CALLS module calls of DISPATCH_OPS_PER_CALL ops)."""
        t = self.torch

        class Norm(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = t.nn.Parameter(t.ones(64, dtype=t.bfloat16))

            def forward(self, x):
                dtype = x.dtype
                x = x.to(t.float32)
                var = x.pow(2).mean(-1, keepdim=True)
                x = x * t.rsqrt(var + 1e-6)
                return self.weight * x.to(dtype)

        norm = Norm().to(self.device)
        x = t.randn(1, 64, device=self.device, dtype=t.bfloat16)
        out = []
        with t.no_grad():
            for r in range(reps + 1):
                self.sync()
                t0 = time.perf_counter()
                for _ in range(DISPATCH_CALLS):
                    norm(x)
                self.sync()
                if r:  # the first round warms up
                    out.append((time.perf_counter() - t0) / (DISPATCH_CALLS * DISPATCH_OPS_PER_CALL))
        return out

    def free(self):
        if self.kind in ("cuda", "rocm"):
            self.torch.cuda.empty_cache()


# ----------------------------------------------------------------------------------- cupy
class CupyBackend:
    name = "cupy"

    def __init__(self):
        import cupy  # lazy: cupy is optional (probe backend)

        self.cp = cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("cupy sees no GPU")
        self.kind = "cuda"

    def info(self) -> dict:
        cp = self.cp
        p = cp.cuda.runtime.getDeviceProperties(0)
        return {"backend": "cupy", "cupy": cp.__version__, "kind": "cuda", "name": p["name"].decode(),
                "memory_bytes": p["totalGlobalMem"], "sm_count": p["multiProcessorCount"],
                "compute_capability": f"{p['major']}.{p['minor']}"}

    def dtypes(self) -> list[str]:
        return ["fp32", "fp16", "fp64"]  # CuPy has no native bf16 matmul (ECOSYSTEM.md)

    def time_fn(self, fn, reps: int, warmup: int = 3) -> list[float]:
        cp = self.cp
        for _ in range(warmup):
            fn()
        cp.cuda.Device().synchronize()
        out = []
        for _ in range(reps):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            fn()
            b.record()
            b.synchronize()
            out.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
        return out

    def gemm(self, dtype, m, n, k, reps):
        cp = self.cp
        dt = {"fp32": cp.float32, "fp16": cp.float16, "fp64": cp.float64}[dtype]
        a = cp.random.standard_normal((m, k), dtype=cp.float32).astype(dt)
        b = cp.random.standard_normal((k, n), dtype=cp.float32).astype(dt)
        return self.time_fn(lambda: cp.matmul(a, b), reps)

    def copy(self, nbytes, reps):
        cp = self.cp
        src = cp.random.standard_normal(nbytes // 4, dtype=cp.float32)
        dst = cp.empty_like(src)
        return self.time_fn(lambda: dst.__setitem__(slice(None), src), reps)

    def triad(self, nbytes, reps):
        cp = self.cp
        b = cp.random.standard_normal(nbytes // 4, dtype=cp.float32)
        c = cp.random.standard_normal(nbytes // 4, dtype=cp.float32)
        a = cp.empty_like(b)
        return self.time_fn(lambda: cp.add(b, 3.0 * c, out=a), reps)

    def host_device(self, nbytes, reps, to_device):
        cp = self.cp
        host = cp.cuda.alloc_pinned_memory(nbytes)
        import numpy as np  # lazy: numpy is optional in the worker's Python (probe backend)

        h = np.frombuffer(host, dtype=np.float32, count=nbytes // 4)
        d = cp.empty(nbytes // 4, dtype=cp.float32)
        fn = (lambda: d.set(h)) if to_device else (lambda: d.get(out=h))
        return self.time_fn(fn, reps)

    def free(self):
        self.cp.get_default_memory_pool().free_all_blocks()


# ---------------------------------------------------------------------------------- numpy
class NumpyBackend:
    name = "numpy"
    kind = "cpu"

    def __init__(self):
        import numpy as np  # lazy: numpy is optional in the worker's Python (probe backend)

        self.np = np
        self.rng = np.random.default_rng(0)

    def info(self) -> dict:
        np = self.np
        return {"backend": "numpy", "numpy": np.__version__, "kind": "cpu",
                "name": platform.processor() or platform.machine(), "cpus": os.cpu_count()}

    def dtypes(self) -> list[str]:
        return ["fp32", "fp64"]

    def time_fn(self, fn, reps, warmup=1):
        for _ in range(warmup):
            fn()
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out

    def gemm(self, dtype, m, n, k, reps):
        np = self.np
        dt = {"fp32": np.float32, "fp64": np.float64}[dtype]
        a = self.rng.standard_normal((m, k)).astype(dt)
        b = self.rng.standard_normal((k, n)).astype(dt)
        out = np.empty((m, n), dtype=dt)
        return self.time_fn(lambda: np.matmul(a, b, out=out), reps)

    def copy(self, nbytes, reps):
        np = self.np
        src = self.rng.standard_normal(nbytes // 8)
        dst = np.empty_like(src)
        return self.time_fn(lambda: np.copyto(dst, src), reps)

    def triad(self, nbytes, reps):
        np = self.np
        b = self.rng.standard_normal(nbytes // 8)
        c = self.rng.standard_normal(nbytes // 8)
        a = np.empty_like(b)

        def fn():
            np.multiply(c, 3.0, out=a)
            np.add(a, b, out=a)
        return self.time_fn(fn, reps)

    def free(self):
        pass


def make_backend(name: str = "auto"):
    """The requested backend, or the first that works for ``auto``; (backend, notes)."""
    notes = []
    order = ["torch", "cupy", "numpy"] if name == "auto" else [name]
    for n in order:
        try:
            return {"torch": TorchBackend, "cupy": CupyBackend, "numpy": NumpyBackend}[n](), notes
        except ImportError:
            notes.append(f"{n}: not installed")
        except Exception as e:  # noqa: BLE001 - a backend that cannot run is skipped with its reason
            notes.append(f"{n}: {type(e).__name__}: {str(e)[:160]}")
    raise RuntimeError("no benchmark backend could run: " + "; ".join(notes))


def run_benchmarks(backend: str = "auto", quick: bool = False, progress=None, cancelled=None,
                   model_shapes=None) -> dict:
    """Every benchmark the backend supports; the result the CLI contract describes.
    ``model_shapes``: (M, N, K) GEMMs of the user's model, measured sustained (``model_gemm``)
    with TYPICAL_MODEL_SHAPES on backends that can (torch on CUDA/ROCm)."""
    be, notes = make_backend(backend)
    info = be.info()
    gpu = be.kind != "cpu"
    progress = progress or (lambda f, t: None)
    cancelled = cancelled or (lambda: False)
    dtypes = be.dtypes()
    if gpu:
        sizes = GEMM_SIZES_QUICK if quick else GEMM_SIZES_FULL
        shapes = [(s, s, s) for s in sizes] + ([] if quick else list(GEMM_SHAPES))
    else:
        sizes = (256, 512, 1024) if quick else (256, 512, 1024, 2048)
        shapes = [(s, s, s) for s in sizes]
    plan = [("gemm", d, shp) for d in dtypes for shp in shapes
            if not (d in ("fp64", "fp32") and gpu and shp[0] * shp[1] * shp[2] > 8192 ** 3)]
    bw_bytes = COPY_BYTES if gpu else (256 << 20)
    plan += [("copy", None, None), ("triad", None, None)]
    if gpu and hasattr(be, "host_device"):
        plan += [("h2d", None, None), ("d2h", None, None)]
    gemm_rows, bw_rows = [], []
    for i, (what, dtype, shape) in enumerate(plan):
        if cancelled():
            raise Cancelled()
        progress(i / len(plan), f"{what} {dtype or ''} {shape or ''}".strip())
        try:
            if what == "gemm":
                m, n, k = shape
                flops = 2.0 * m * n * k
                reps = max(3, min(50, int(2e12 / flops) + 3)) if gpu else max(3, min(20, int(2e10 / flops) + 2))
                st = _stats(be.gemm(dtype, m, n, k, reps))
                gemm_rows.append({"dtype": dtype, "m": m, "n": n, "k": k, "tflops": flops / st["median_s"] / 1e12,
                                  "tflops_best": flops / st["min_s"] / 1e12, "tflops_worst": flops / st["max_s"] / 1e12,
                                  **st})
            elif what in ("copy", "triad"):
                reps = 20 if gpu else 10
                times = be.copy(bw_bytes, reps) if what == "copy" else be.triad(bw_bytes, reps)
                st = _stats(times)
                moved = bw_bytes * (2 if what == "copy" else 3)
                bw_rows.append({"kind": what, "gbps": moved / st["median_s"] / 1e9, "bytes": bw_bytes,
                                "convention": "read+write bytes per second (STREAM)", **st})
            else:
                nb = 512 << 20
                st = _stats(be.host_device(nb, 10, what == "h2d"))
                bw_rows.append({"kind": what + "_pinned", "gbps": nb / st["median_s"] / 1e9, "bytes": nb,
                                "convention": "bytes transferred per second", **st})
        except Exception as e:  # noqa: BLE001 - one failing measurement must not lose the others
            notes.append(f"{what} {dtype or ''} {shape or ''}: {type(e).__name__}: {str(e)[:160]}")
        finally:
            be.free()
    dispatch = None
    if gpu and hasattr(be, "dispatch") and not cancelled():
        try:
            st = _stats(be.dispatch(7))
            dispatch = {"us_per_op": st["median_s"] * 1e6, "ops_per_call": DISPATCH_OPS_PER_CALL,
                        "what": "host time per eager op of an HF-style RMSNorm nn.Module on a tiny tensor", **st}
        except Exception as e:  # noqa: BLE001 - the GEMM and bandwidth results stay
            notes.append(f"dispatch: {type(e).__name__}: {str(e)[:160]}")
    model_rows = []
    if gpu and hasattr(be, "model_gemms") and be.kind in ("cuda", "rocm") and not cancelled():
        shapes = []
        for shp in [tuple(int(v) for v in s) for s in (model_shapes or [])] + list(TYPICAL_MODEL_SHAPES):
            if shp not in shapes:
                shapes.append(shp)
        progress(0.97, f"model-shaped GEMMs ({len(shapes)} shapes, sustained)")
        try:
            model_rows = be.model_gemms("bf16", shapes, MODEL_GEMM_WARM_S, MODEL_GEMM_TIMED_S, MODEL_GEMM_MIN_ROUNDS)
        except Exception as e:  # noqa: BLE001 - e.g. out of memory for a huge vocabulary: the sweep stays
            notes.append(f"model-shaped GEMMs: {type(e).__name__}: {str(e)[:160]}")
        finally:
            be.free()
    progress(1.0, "done")
    best = {}
    for r in gemm_rows:
        best[r["dtype"]] = max(best.get(r["dtype"], 0.0), r["tflops"])
    if gpu and "fp8" not in dtypes and be.name == "torch":
        notes.append("fp8: not measured (needs compute capability 8.9+ and torch._scaled_mm)")
    if be.name == "cupy":
        notes.append("bf16 and tf32: not measured (CuPy has no native bf16 matmul)")
    if be.kind == "mps":
        notes.append("mps: no device events; host-timed after synchronize; no NVML telemetry")
    return {"device": info, "backend": be.name, "gemm": gemm_rows, "model_gemm": model_rows, "gemm_best_tflops": best,
            "bandwidth": bw_rows, "dispatch": dispatch, "notes": notes, "quick": quick}
