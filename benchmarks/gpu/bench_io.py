"""What the GPU benchmark scripts share: a CUDA-event timer, the kernel table of a torch.profiler run,
an all-or-nothing JSON write (a run cut short by the device's time limit leaves the previous file,
never half of one) and the command line a data file records."""
from __future__ import annotations

import json
import os
import statistics
import sys


def command_line(launcher: str = "python") -> str:
    """The running command as typed at the repository root: ``python -m benchmarks.gpu.<script> ARGS``
    (``launcher``: what started it, e.g. ``torchrun --standalone --nproc-per-node 8``)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    script = f"-m {spec.name}" if spec is not None and spec.name != "__main__" else os.path.relpath(sys.argv[0])
    return " ".join([launcher, script, *sys.argv[1:]])


def cuda_median_ms(torch, fn, reps: int = 10, warmup: int = 3) -> float:
    """Median milliseconds of ``fn`` between CUDA events, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1))
    return statistics.median(times)


def graph_replay_ms(torch, graph, reps: int, repeats: int) -> list:
    """Milliseconds per replay of a captured CUDA ``graph``: ``repeats`` runs of ``reps`` replays between
    CUDA events."""
    runs = []
    for _ in range(repeats):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(reps):
            graph.replay()
        e1.record()
        torch.cuda.synchronize()
        runs.append(e0.elapsed_time(e1) / reps)
    return runs


def graph_median_ms(torch, fn, reps: int = 20, repeats: int = 3) -> float:
    """Median milliseconds of one ``fn`` captured in a CUDA graph and replayed ``reps`` times between CUDA
    events (``repeats`` runs): GPU time without the CPU's launch cost, as a serving engine's decode step."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    graph.replay()
    runs = graph_replay_ms(torch, graph, reps, repeats)
    del graph
    return statistics.median(runs)


def kernel_times(events, per: float = 1.0) -> dict:
    """{name: [ms, calls]} per ``per`` repetitions of the GPU work in a torch.profiler run
    (``prof.key_averages()``): kernels, memcpy and memset, the events with device time of their own
    that are neither aten ops nor CUDA runtime calls."""
    out: dict = {}
    for ev in events:
        us = getattr(ev, "self_device_time_total", None)
        if us is None:  # torch before 2.4
            us = getattr(ev, "self_cuda_time_total", 0.0)
        if not us or us <= 0 or ev.key.startswith(("aten::", "cuda")):
            continue
        k = out.setdefault(ev.key, [0.0, 0.0])
        k[0] += us / 1e3 / per
        k[1] += ev.count / per
    return out


def write_json(path: str, data) -> None:
    """``data`` to ``path`` through a temporary file and a rename."""
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)
