"""The cluster probe's launch and import side: the torchrun command or Slurm batch script
that runs ``planner_app.probe.collectives`` on the user's cluster, and the reading of its
result file (verdicts against the expected link rate, calibration of the scaling model)."""
from __future__ import annotations

import json
import shlex

from planner_app.core.collectives import bus_factor
from planner_app.core.errors import InputError
from planner_app.core.network import topology
from planner_app.specdb.schema import SpecDataError

MODULE = "planner_app.probe.collectives"
SAFE_ENV = {"NCCL_NVLS_ENABLE": "0"}  # no NVLink multicast (SHARP) unless the user chooses it


def torchrun_command(nodes: int, gpus_per_node: int, out: str, master_addr: str = "$MASTER_ADDR",
                     port: int = 29500, python: str = "python", quick: bool = False) -> str:
    """The command to run on every node (single node: no rendezvous needed)."""
    if nodes < 1 or gpus_per_node < 1:
        raise InputError("nodes", "nodes and GPUs per node must be at least 1")
    args = ["--out", out] + (["--max-bytes", str(256 << 20), "--factor", "4"] if quick else [])
    launcher = [python, "-m", "torch.distributed.run", f"--nproc-per-node={gpus_per_node}"]
    if nodes == 1:
        launcher.append("--standalone")  # a local rendezvous on a free port
    else:
        launcher += [f"--nnodes={nodes}", "--rdzv-backend=c10d", f"--rdzv-endpoint={master_addr}:{port}",
                     "--rdzv-id=gpu-planner-probe"]
    env = " ".join(f"{k}={v}" for k, v in SAFE_ENV.items())
    return f"{env} " + " ".join(launcher + ["-m", MODULE] + [shlex.quote(a) for a in args])


def slurm_script(nodes: int, gpus_per_node: int, out: str, partition: str | None = None,
                 time_limit: str = "00:20:00", python: str = "python", account: str | None = None,
                 setup: str = "", quick: bool = False) -> str:
    """A Slurm batch script that runs the probe on ``nodes`` nodes with srun + torchrun."""
    if nodes < 1 or gpus_per_node < 1:
        raise InputError("nodes", "nodes and GPUs per node must be at least 1")
    lines = ["#!/bin/bash", "#SBATCH --job-name=gpu-planner-probe", f"#SBATCH --nodes={nodes}",
             "#SBATCH --ntasks-per-node=1", f"#SBATCH --gpus-per-node={gpus_per_node}",
             f"#SBATCH --time={time_limit}", "#SBATCH --exclusive", "#SBATCH --output=gpu-planner-probe-%j.log"]
    if partition:
        lines.append(f"#SBATCH --partition={partition}")
    if account:
        lines.append(f"#SBATCH --account={account}")
    lines += ["", "set -euo pipefail", setup, 'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
              "export MASTER_ADDR", *(f"export {k}={v}" for k, v in SAFE_ENV.items()),
              f"srun {python} -m torch.distributed.run --nnodes=$SLURM_NNODES --nproc-per-node={gpus_per_node} "
              f"--rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:29500 --rdzv-id=$SLURM_JOB_ID -m {MODULE} "
              f"--out {shlex.quote(out)}" + (f" --max-bytes {256 << 20} --factor 4" if quick else ""), ""]
    return "\n".join(line for line in lines if line is not None)


def read_result(path: str) -> dict:
    """A collectives result file; errors name the file and what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise SpecDataError(path, None, None, f"cannot be read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise SpecDataError(path, e.lineno, None, f"is not valid JSON ({e.msg})") from None
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("planner.collectives/"):
        raise SpecDataError(path, None, "schema", "is not a result of python -m planner_app.probe.collectives")
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows:
        raise SpecDataError(path, None, "rows", "has no measurements")
    for i, r in enumerate(rows):
        for k in ("collective", "bytes", "ranks", "time_us", "algbw_gbps", "busbw_gbps"):
            if k not in r:
                raise SpecDataError(path, None, f"rows[{i}].{k}", "is missing")
        expected = r["algbw_gbps"] * bus_factor(r["collective"], r["ranks"])
        if abs(expected - r["busbw_gbps"]) > 1e-6 * max(1.0, expected):
            raise SpecDataError(path, None, f"rows[{i}].busbw_gbps", "does not match algbw x the nccl-tests factor")
    return data


def best_busbw(data: dict, collective: str = "all_reduce") -> float | None:
    rows = [r for r in data["rows"] if r["collective"] == collective]
    return max((r["busbw_gbps"] for r in rows), default=None)


def collective_verdicts(data: dict, gpu, intra, inter, nics_per_node: int = 8) -> list[dict]:
    """Measured all-reduce bus bandwidth against what the links should give: inside a node
    the GPU's NVLink per direction (or the PCIe rate) times the fabric's efficiency, the
    engine's own assumption (``core.network.topology``); across nodes the node's aggregate
    NIC rate times its efficiency (a ring's busbw approaches it, nccl-tests PERFORMANCE.md)."""
    env = data.get("environment", {})
    nodes = env.get("nodes", 1)
    measured = best_busbw(data)
    if measured is None or gpu is None or int(env.get("world_size") or 0) < 2:
        return []  # one rank moves no data between GPUs: nothing to compare
    per_node = int(env.get("local_world_size") or env.get("world_size") or 8)
    topo = topology(gpu, intra, inter, nics_per_node, per_node)
    if nodes <= 1:
        expected = topo.intra_gb_s
        what = f"{intra.name if intra is not None else 'the GPU links'} inside the node"
    else:
        expected = topo.inter_gb_s * per_node
        what = (f"{inter.name} x{nics_per_node}" if inter is not None else "the network") + " between nodes"
    frac = measured / expected
    status = "normal" if frac >= 0.85 else "low"
    return [{"what": "all-reduce bus bandwidth", "measured_gbps": measured, "expected_gbps": expected,
             "fraction": frac, "status": status,
             "text": f"all-reduce bus bandwidth {measured:,.0f} GB/s over {env.get('world_size', '?')} GPUs: "
                     f"{frac:.0%} of the {expected:,.0f} GB/s expected from {what}"
                     + ("" if status == "normal" else " (check NCCL settings, topology, or congestion)")}]


def default_intra_fabric(db, gpu):
    """The intra-node link the engine assumes for ``gpu`` (NVLink generation or PCIe)."""
    if gpu is None:
        return None
    from planner_app.service.resolve import intra_for_gpu
    return intra_for_gpu(db, gpu)


def summary(data: dict) -> dict:
    """Per collective, the row at the largest message; the range of the point-to-point matrix."""
    largest = {}
    for r in data["rows"]:
        if r["collective"] not in largest or r["bytes"] > largest[r["collective"]]["bytes"]:
            largest[r["collective"]] = r
    p2p = [v for row in (data.get("p2p_gbps") or []) for v in row if v is not None]
    return {"largest": largest, "p2p_min_gbps": min(p2p) if p2p else None, "p2p_max_gbps": max(p2p) if p2p else None,
            "best_all_reduce_busbw_gbps": best_busbw(data)}


def attach_to_profile(udb, name: str, data: dict, gpu) -> None:
    """Add a collective result to calibration profile ``name`` (created if it does not exist):
    selecting the profile then replaces the engine's intra- or inter-node bandwidth."""
    rec = udb.profile(name)
    result = dict(rec["result"]) if rec else {}
    result["collectives"] = data
    gpu_id = (rec or {}).get("gpu_id") or (gpu.id if gpu is not None else None)
    device = (rec or {}).get("device") or ", ".join(sorted(set(data.get("environment", {}).get("devices", []))))
    udb.save_profile(name, result, gpu_id=gpu_id, device=device)
