"""The host side of a training estimate (issue 19): checkpoints, host RAM and the input
pipeline, joined from the engine's pure formulas (core/training/checkpoint.py, core/training/host.py), the plan's
instance and an optional host probe result (probe/host.py). Adds the ``host`` key."""
from __future__ import annotations

import json

from planner_app.core.errors import InputError
from planner_app.core.text import QT_TRANSLATE_NOOP, Text
from planner_app.core.training.checkpoint import (
    DEFAULT_WRITE_GB_S_PER_NODE,
    CheckpointPlan,
    checkpoint_cost,
    checkpoint_sizes,
)
from planner_app.core.training.host import (
    HostRates,
    host_ram,
    input_pipeline,
    loader_pinned_bytes,
)
from planner_app.core.training.setup import recipe_bytes


def load_host_probe(path: str | None) -> dict | None:
    """A host probe result saved as JSON (``gpu-planner host-probe --json -o FILE``)."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise InputError("host_probe", f"cannot read {path!r}: {e.strerror or e}") from None
    except ValueError:
        raise InputError("host_probe", f"{path!r} is not JSON; give a file written by gpu-planner host-probe --json") from None
    if not isinstance(data, dict) or "storage" not in data:
        raise InputError("host_probe", f"{path!r} is not a host probe result (no 'storage' key)")
    return data


def host_section(options, est) -> dict:
    """The ``host`` object of a training estimate (``options``: the request's HostOptions)."""
    model, hw, setup, plan = est.model, est.hardware, est.setup, est.plan
    probe = load_host_probe(options.host_probe)
    rates = HostRates().calibrated(probe)
    inst = hw.instance
    write = options.storage_write_gb_s
    write_src = "option"
    if write is None:
        measured = ((probe or {}).get("storage") or {}).get("write_gb_s")
        write, write_src = (measured, "host probe") if measured else (DEFAULT_WRITE_GB_S_PER_NODE, "default")
    ckpt = CheckpointPlan(interval_s=options.checkpoint_interval_min * 60, kept=options.checkpoints_kept,
                          write_gb_s_per_node=write)
    rb = recipe_bytes(setup.recipe, setup.framework)
    lora = setup.lora(model)
    trainable = int(lora.adapter_params(model.dense_mlp_layers, model.moe_layers)) if lora is not None else None
    sizes = checkpoint_sizes(model, rb, setup.optimizer, trainable, lora.adapter_bytes if lora is not None else None)
    gpn = min(plan.gpus_per_node, plan.gpus)
    nodes = plan.nodes
    nvme = inst.local_nvme_gb * 1e9 if inst is not None and inst.local_nvme_gb else None
    cp = checkpoint_cost(sizes, plan.gpus, nodes, ckpt, est.time.train_s, nvme)
    cp["write_source"] = write_src
    samples_s = est.time.tokens_per_s / max(setup.seq_len, 1)
    pipe = input_pipeline(model, samples_s, setup.seq_len, plan.gpus, nodes,
                          inst.vcpu if inst is not None else 0, inst.local_nvme_gb if inst is not None else 0,
                          inst.network_gbit_s if inst is not None else 0, rates)
    pinned = loader_pinned_bytes(model, plan.micro_batch, setup.seq_len, pipe["workers_per_gpu"])
    ram = host_ram(est.memory.host_bytes or 0.0, gpn, pipe["workers_per_gpu"], pinned,
                   inst.ram_gb * 1e9 if inst is not None and inst.ram_gb else None)
    return {"checkpoint": cp, "ram": ram, "input": pipe, "advice": host_advice(cp, ram, pipe, setup, inst)}


def host_advice(cp: dict, ram: dict, pipe: dict, setup, inst) -> list[Text]:
    """Plain sentences for what the host cannot do."""
    out = []
    if ram.get("fits") is False:
        gb = ram["needed_bytes"] / 1e9
        if setup.offload != "none":
            out.append(Text(QT_TRANSLATE_NOOP("Engine", "the CPU offload does not fit the host: it needs {need:,.0f} GB "
                                                        "of RAM per node ({states:,.0f} GB offloaded states), the "
                                                        "instance has {ram:,.0f} GB; offload less (--offload "
                                                        "optimizer), shard more (--zero 3, more nodes) or choose an "
                                                        "instance with more RAM"),
                            need=gb, states=ram["parts"]["offloaded_states"] / 1e9, ram=ram["ram_bytes"] / 1e9))
        else:
            out.append(Text(QT_TRANSLATE_NOOP("Engine", "host RAM is short: the plan needs {need:,.0f} GB per node, "
                                                        "the instance has {ram:,.0f} GB"),
                            need=gb, ram=ram["ram_bytes"] / 1e9))
    if pipe["verdict"] == "cpu-bound":
        out.append(Text(QT_TRANSLATE_NOOP("Engine", "the input pipeline is CPU-bound: the GPUs take {need:,.0f} "
                                                    "samples/s per node, {cores:,.0f} cores decode {have:,.0f}; the "
                                                    "GPUs wait ({util:.0f}% busy); decode on the GPU (NVIDIA DALI), "
                                                    "store pre-decoded or smaller images, or choose more vCPUs"),
                        need=pipe["samples_per_s_per_node"], cores=pipe.get("loader_cores_per_node", 0),
                        have=pipe["cpu_samples_per_s_per_node"], util=pipe["gpu_utilization_bound"] * 100))
    elif pipe["verdict"] == "storage-bound":
        out.append(Text(QT_TRANSLATE_NOOP("Engine", "the input pipeline is storage-bound: the GPUs read {need:.2f} "
                                                    "GB/s per node, {where} gives {have:.2f} GB/s; cache the dataset "
                                                    "on local NVMe or in RAM"),
                        need=pipe["read_gb_s_per_node"], where=pipe.get("storage", ""), have=pipe["storage_read_gb_s"]))
    if cp["overhead_fraction"] > 0.05:
        out.append(Text(QT_TRANSLATE_NOOP("Engine", "checkpoints cost {pct:.0f}% of training time ({write:,.0f} s "
                                                    "per save every {every:,.0f} min); save less often, save "
                                                    "asynchronously (torch.distributed.checkpoint.async_save) or "
                                                    "write faster storage"),
                        pct=cp["overhead_fraction"] * 100, write=cp["write_s"], every=cp["interval_s"] / 60))
    if cp.get("fits_local_disk") is False:
        out.append(Text(QT_TRANSLATE_NOOP("Engine", "{kept} checkpoints need {need:,.0f} GB per node, more than the "
                                                    "instance's {have:,.0f} GB of local NVMe; keep fewer or write to "
                                                    "shared storage"),
                        kept=cp["kept"], need=cp["disk_bytes_per_node"] / 1e9, have=inst.local_nvme_gb))
    return out
