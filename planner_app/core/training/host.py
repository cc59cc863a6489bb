"""The host side of a training plan: host RAM per node (offloaded states, pinned loader
buffers, loader workers, the training processes) against the instance's RAM, and the input
pipeline (samples/s and bytes/s the GPUs consume against the CPU's decode rate, the local NVMe
and the network). Pure: numbers in, dicts out; the host probe (probe/host.py) calibrates the
rates through ``HostRates``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

# ---- host RAM -----------------------------------------------------------------------------------
# One training process's own memory (Python, torch, CUDA runtime, cuDNN, pinned buffers), before
# offloaded states: measured 4.15-4.21 GB PSS (5.2 GB RSS) for a ResNet-50 training process on
# the H200 machine, torch 2.11 (tests/data/resnet50_loader_h200.json).
TRAINING_PROCESS_HOST_BYTES = 4.2e9
# A DataLoader worker is a fork of the training process; what it adds (PSS: its own pages plus a
# share of those it still shares) was 0.20-0.27 GB on average, 0.41 GB at most, there.
LOADER_WORKER_HOST_BYTES = 0.4e9
# torch.utils.data.DataLoader's default prefetch_factor: 2 batches per worker in flight, and
# pin_memory keeps one more in page-locked memory (torch/utils/data/dataloader.py).
PREFETCH_FACTOR = 2
# The kernel, page cache for the dataset and system services need a share of RAM: plan on
# at most this fraction for the job.
HOST_RAM_USABLE_FRACTION = 0.9
# ---- input pipeline -----------------------------------------------------------------------------
# ImageNet-1k training images as stored: ILSVRC2012_img_train.tar holds 1,281,167 JPEGs in
# 147,897,477,120 bytes (138 GiB), 115.4 kB each on average.
IMAGENET_MEAN_JPEG_BYTES = 115.4e3
IMAGE_SIDE = 224  # RandomResizedCrop(224): the ResNet-50 training recipe (torchvision references)
# CPU cost of one ImageNet training sample with PIL: JPEG decode, RandomResizedCrop(224),
# horizontal flip, to tensor and normalise. Default from the host probe on the H200 machine's
# server CPU: 177 images/s per core on 500x375 JPEGs of 104 kB (tests/data/host_probe_h200.json;
# torchvision DataLoader workers delivered 153-167 images/s each there,
# tests/data/resnet50_loader_h200.json). A probe of the target host replaces it
# (HostRates.decode_images_per_s_per_core).
DECODE_IMAGES_PER_S_PER_CORE = 175.0
# Pre-tokenised text (Megatron's indexed datasets, torchtitan's streams): token ids as uint16
# when the vocabulary fits, else int32 (megatron/core/datasets/indexed_dataset.py,
# DType.optimal_dtype); reading them costs the CPU next to nothing.
TOKEN_READ_TOKENS_PER_S_PER_CORE = 50e6
# Local NVMe and network read rates when no probe says otherwise: one data-centre NVMe drive
# reads ~3 GB/s sequentially (PCIe Gen4 x4 drives quote 6-7 GB/s; 3 is a sustained planning
# figure); GPU servers stripe 3.84 TB drives (DGX H100: 8 x 3.84 TB U.2 NVMe; AWS p5.48xlarge:
# 8 x 3.84 TB), so an instance's local NVMe counts as ceil(size / 3.84 TB) drives read together.
# A network share delivers ~80% of the instance's line rate.
DEFAULT_NVME_READ_GB_S = 3.0
NVME_DRIVE_GB = 3840.0
NETWORK_EFFICIENCY = 0.8
# One core per GPU stays with its training process (the main loop, CUDA launches).
CORES_PER_TRAINING_PROCESS = 1


@dataclass(frozen=True)
class HostRates:
    """Host rates the plan uses: defaults above, or a host probe's measurements."""

    decode_images_per_s_per_core: float = DECODE_IMAGES_PER_S_PER_CORE
    nvme_read_gb_s: float = DEFAULT_NVME_READ_GB_S
    source: str = "defaults"

    def calibrated(self, probe: dict | None) -> HostRates:
        """These rates with a host probe's results (probe/host.py) where it measured them."""
        if not probe:
            return self
        decode = (probe.get("decode") or {}).get("images_per_s_per_core")
        read = (probe.get("storage") or {}).get("read_gb_s")
        return replace(self, decode_images_per_s_per_core=decode or self.decode_images_per_s_per_core,
                       nvme_read_gb_s=read or self.nvme_read_gb_s, source="host probe")


def sample_bytes(model, seq_len: int) -> tuple[float, str]:
    """Bytes read per training sample and what the sample is."""
    if not model.is_transformer:
        return IMAGENET_MEAN_JPEG_BYTES, "jpeg"
    token_bytes = 2 if model.vocab <= 65535 else 4
    return float(seq_len * token_bytes), "tokens"


def loader_pinned_bytes(model, micro_batch: int, seq_len: int, workers: int) -> float:
    """Host bytes of the batches a GPU's loader keeps in flight: prefetched by each worker
    plus the pinned one (int64 ids and labels for text; fp32 3x224x224 tensors for images)."""
    per_sample = 3 * IMAGE_SIDE * IMAGE_SIDE * 4 if not model.is_transformer else 2 * seq_len * 8
    return (PREFETCH_FACTOR * max(workers, 1) + 1) * micro_batch * per_sample


def input_pipeline(model, samples_per_s: float, seq_len: int, gpus: int, nodes: int, vcpus_per_node: int,
                   nvme_gb_per_node: float, network_gbit_s: float, rates: HostRates) -> dict:
    """Demand of the GPUs on the host and the verdict: ``fed`` (the CPUs and storage keep
    up), ``cpu-bound`` (decode cannot), ``storage-bound`` (reads cannot). Samples per second
    are the plan's for all GPUs; every rate per node."""
    nbytes, kind = sample_bytes(model, seq_len)
    demand_s = samples_per_s / nodes
    gpn = gpus / nodes
    per_core = (rates.decode_images_per_s_per_core if kind == "jpeg"
                else TOKEN_READ_TOKENS_PER_S_PER_CORE / seq_len)
    cores_needed = demand_s / per_core
    needed = max(math.ceil(cores_needed / gpn), 1)
    out: dict[str, Any] = {"sample": kind, "bytes_per_sample": nbytes, "samples_per_s_per_node": demand_s,
                           "read_gb_s_per_node": demand_s * nbytes / 1e9, "samples_per_s_per_core": per_core,
                           "cores_needed_per_node": cores_needed, "workers_per_gpu_needed": needed,
                           "workers_per_gpu": needed, "rates_source": rates.source}
    if vcpus_per_node:
        free = max(vcpus_per_node - CORES_PER_TRAINING_PROCESS * gpn, 0)
        out["vcpus_per_node"] = vcpus_per_node
        out["loader_cores_per_node"] = free
        out["cpu_samples_per_s_per_node"] = free * per_core
        out["workers_per_gpu"] = max(min(needed, int(free // gpn)), 1)  # more workers than cores do not help
    if nvme_gb_per_node:
        drives = 1 if rates.source == "host probe" else math.ceil(nvme_gb_per_node / NVME_DRIVE_GB)
        out["storage"], read = "local NVMe", rates.nvme_read_gb_s * drives
    elif network_gbit_s:
        out["storage"], read = "network", network_gbit_s / 8 * NETWORK_EFFICIENCY
    else:
        read = None
    if read:
        out["storage_read_gb_s"] = read
        out["storage_samples_per_s_per_node"] = read * 1e9 / nbytes
    caps: dict[str, float | None] = {"cpu-bound": out.get("cpu_samples_per_s_per_node"),
                                     "storage-bound": out.get("storage_samples_per_s_per_node")}
    known: dict[str, float] = {k: v for k, v in caps.items() if v is not None}
    fed = min(known.values()) if known else None
    if fed is None:
        out["verdict"] = "unknown"
    elif fed >= demand_s:
        out["verdict"] = "fed"
    else:
        out["verdict"] = min(known, key=known.__getitem__)
    out["samples_per_s_per_node_fed"] = min(demand_s, fed) if fed is not None else demand_s
    out["gpu_utilization_bound"] = out["samples_per_s_per_node_fed"] / demand_s if demand_s else 1.0
    return out


def host_ram(host_bytes_per_gpu: float, gpus_per_node: int, workers_per_gpu: int, pinned_bytes_per_gpu: float,
             ram_bytes: float | None) -> dict:
    """Host RAM one node needs and whether the instance has it."""
    parts = {"offloaded_states": host_bytes_per_gpu * gpus_per_node,
             "training_processes": TRAINING_PROCESS_HOST_BYTES * gpus_per_node,
             "loader_workers": LOADER_WORKER_HOST_BYTES * workers_per_gpu * gpus_per_node,
             "pinned_batches": pinned_bytes_per_gpu * gpus_per_node}
    need = sum(parts.values())
    out: dict[str, Any] = {"needed_bytes": need, "parts": parts, "usable_fraction": HOST_RAM_USABLE_FRACTION}
    if ram_bytes:
        out["ram_bytes"] = ram_bytes
        out["fits"] = need <= ram_bytes * HOST_RAM_USABLE_FRACTION
    else:
        out["ram_bytes"] = None
        out["fits"] = None
    return out
