"""What the GPU benchmark scripts share: a CUDA-event timer and an all-or-nothing JSON write (a run
cut short by the device's time limit leaves the previous file, never half of one)."""
from __future__ import annotations

import json
import os
import statistics


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


def write_json(path: str, data) -> None:
    """``data`` to ``path`` through a temporary file and a rename."""
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)
