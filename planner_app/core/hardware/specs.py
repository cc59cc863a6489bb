"""Hardware descriptions the engine uses: GPUs, fabrics (links and networks), instances."""
from __future__ import annotations

from dataclasses import dataclass, field

from planner_app.core.errors import InputError

# The device runtime outside the model (measured on the H200, torch 2.11):
CUBLAS_WORKSPACE_BYTES = 32 * 2**20  # cuBLAS + cuBLASLt workspaces after a 16/32-bit GEMM, measured on H200
CUDA_CONTEXT_BYTES = 0.55e9  # CUDA context + kernels, outside the allocator (H200: 150.11 GB total, 149.56 free)

# NVML reports slightly less than the nominal GiB (H200: 143,771 MiB of 144,384): the
# usable capacity is the datasheet size in GiB times this factor.
NVML_CAPACITY_FACTOR = 0.9958


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model. Rates are dense tensor TFLOPS (vector rates for fp32/fp64)."""

    id: str
    name: str
    vendor: str = "NVIDIA"
    memory_gb: float = 80.0
    mem_bw_gb_s: float = 2000.0
    fp64_tflops: float = 0.0
    fp32_tflops: float = 0.0
    tf32_tflops: float = 0.0
    bf16_tflops: float = 0.0
    fp16_tflops: float = 0.0
    fp8_tflops: float = 0.0
    int8_tops: float = 0.0
    tdp_w: float = 0.0
    link: str = "none"
    link_bw_gb_s: float = 0.0  # total bidirectional per GPU, as datasheets quote it
    pcie_gen: int = 4
    pcie_lanes: int = 16
    # NVIDIA: "sm_90" (compute capability 9.0, NVIDIA's CUDA GPUs list); AMD: the gfx target ("gfx942",
    # ROCm's GPU hardware specifications); others a family slug; "" unknown (a user's own row)
    arch: str = ""
    source: str = ""
    retrieved: str = ""

    def __post_init__(self):
        if not self.memory_gb > 0:
            raise InputError("memory_gb", f"must be positive, got {self.memory_gb}")
        if not self.mem_bw_gb_s > 0:
            raise InputError("mem_bw_gb_s", f"must be positive, got {self.mem_bw_gb_s}")

    @property
    def compute_capability(self) -> int | None:
        """NVIDIA compute capability as major x 10 + minor (90 for sm_90, 103 for sm_103); None off NVIDIA
        or when the architecture is unknown."""
        if self.arch.startswith("sm_") and self.arch[3:].isdigit():
            return int(self.arch[3:])
        return None

    @property
    def capacity_bytes(self) -> float:
        return self.memory_gb * 2**30 * NVML_CAPACITY_FACTOR

    def peak_tflops(self, gemm_bits: int, dtype: str = "bf16") -> float:
        """Dense peak for the GEMM precision: 8-bit -> fp8 (int8 if no fp8), 16-bit -> bf16
        (fp16 when bf16 is not supported, as on V100/T4), 32-bit -> fp32 vector."""
        if gemm_bits == 8:
            return self.fp8_tflops or self.int8_tops or self.bf16_tflops or self.fp16_tflops
        if gemm_bits == 16:
            if dtype == "fp16":
                return self.fp16_tflops or self.bf16_tflops
            return self.bf16_tflops or self.fp16_tflops
        if gemm_bits == 19:
            rate = self.tf32_tflops or self.fp32_tflops
        else:
            rate = self.fp32_tflops
        if not rate:  # no published rate (Gaudi, Ascend): an error naming it, not a division by zero
            raise InputError("recipe", f"{self.name} has no fp32 rate in the spec data, so its fp32 GEMMs (an fp32 "
                                       "recipe, or fp32 LoRA adapters) cannot be timed; use a 16-bit recipe "
                                       "(and --lora-dtype bf16)")
        return rate

    @property
    def link_bw_per_direction_gb_s(self) -> float:
        return self.link_bw_gb_s / 2.0


@dataclass(frozen=True)
class FabricSpec:
    """A link or network: per-direction bandwidth per port, latency, achievable fraction."""

    id: str
    name: str
    scope: str  # "intra" or "inter"
    bw_gb_s: float
    latency_us: float
    efficiency: float
    source: str = ""
    retrieved: str = ""

    @property
    def effective_gb_s(self) -> float:
        return self.bw_gb_s * self.efficiency


@dataclass(frozen=True)
class Prices:
    """Per instance-hour prices; None where not offered or unknown."""

    currency: str = "USD"
    on_demand: float | None = None
    reserved_1yr: float | None = None
    reserved_3yr: float | None = None
    spot: float | None = None
    date: str = ""


@dataclass(frozen=True)
class InstanceSpec:
    """A cloud server shape: GPUs, host, network and prices."""

    provider: str
    region: str
    instance_id: str
    gpu_id: str
    gpu_count: int
    gpu_fraction: float = 1.0
    vcpu: int = 0
    ram_gb: float = 0.0
    local_nvme_gb: float = 0.0
    network_gbit_s: float = 0.0
    network: str = "unknown"  # the network as the provider names it (the spec data's fabric column)
    fabric_id: str = "eth-100"
    nics: int = 1
    intra_node_link: str = "pcie4"
    prices: Prices = field(default_factory=Prices)
    source: str = ""
    retrieved: str = ""

    @property
    def key(self) -> str:
        return f"{self.provider}:{self.region}:{self.instance_id}"
