"""Live probing of local GPUs and clusters (NVML, microbenchmarks, collectives)."""
