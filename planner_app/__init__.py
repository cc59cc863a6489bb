"""GPU Capacity Planner: size GPU clusters and cloud GPU servers."""
import time

# When the package was first imported: the app's "first paint" counts from here, before Qt and the
# window's modules are imported (planner_app/app.py).
STARTED_S = time.perf_counter()

__version__ = "0.1.0"
ENGINE_VERSION = "2026.12.1"
