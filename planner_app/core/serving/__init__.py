"""Continuous-batching servers (vLLM, SGLang, TensorRT-LLM): the KV pool, the engine step and the
steady state (``engine``), what each engine runs on each GPU (``support``), the closed-loop
benchmark's TTFT (``benchmark``) and the SLO search over deployments (``search``)."""
