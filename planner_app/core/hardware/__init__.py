"""Hardware: GPU, instance and fabric specs (``specs``), GEMM and memory-bound kernel time on a
GPU (``compute``), collectives over the network topology (``network``) and nccl-tests' bus
bandwidth arithmetic (``collectives``)."""
