"""GPU Capacity Planner: size GPU clusters and cloud GPU servers."""

__version__ = "0.1.0"
ENGINE_VERSION = "2026.12.1"
