"""Telemetry sampling like ``nvidia-smi dmon``: a background thread samples at 1-10 Hz into
a ring buffer, which can be recorded to CSV. Stop it before NVML shuts down."""
from __future__ import annotations

import collections
import csv
import os
import threading
import time

from planner_app.probe import nvml


class Sampler:
    """Samples GPUs ``indices`` every 1/``hz`` seconds into a ring buffer of ``capacity``."""

    def __init__(self, indices=(0,), hz: float = 2.0, capacity: int = 3600, sample_fn=None):
        if not 1.0 <= hz <= 10.0:
            raise ValueError(f"hz must be between 1 and 10, got {hz}")
        self.indices = tuple(indices)
        self.period_s = 1.0 / hz
        self.buffer = collections.deque(maxlen=capacity)
        self._sample = sample_fn or nvml.sample
        self._stop = threading.Event()
        self._thread = None
        self._lock = threading.Lock()
        self._csv = None
        self._csv_file = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="gpu-telemetry", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        next_t = time.monotonic()
        while not self._stop.is_set():
            for i in self.indices:
                s = self._sample(i)
                if s is not None:
                    with self._lock:
                        self.buffer.append(s)
                        if self._csv is not None:
                            self._csv.writerow(s)
            next_t += self.period_s
            self._stop.wait(max(0.0, next_t - time.monotonic()))

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.stop_recording()

    def snapshot(self) -> list[dict]:
        with self._lock:
            return list(self.buffer)

    def record_to(self, path: str) -> None:
        """Append every following sample to a CSV file (header written once)."""
        with self._lock:
            new = not os.path.exists(path) or os.path.getsize(path) == 0
            self._csv_file = open(path, "a", newline="", encoding="utf-8")  # noqa: SIM115 - closed in stop_recording
            self._csv = csv.DictWriter(self._csv_file, fieldnames=nvml.TELEMETRY_FIELDS, extrasaction="ignore")
            if new:
                self._csv.writeheader()

    def stop_recording(self) -> None:
        with self._lock:
            if self._csv_file is not None:
                self._csv_file.close()
            self._csv = None
            self._csv_file = None
