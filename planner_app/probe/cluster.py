"""The cluster probe's launch and import side: the torchrun command or Slurm batch script
that runs ``planner_app.probe.collectives`` on the user's cluster, and the reading of its
result file (verdicts against the expected link rate, calibration of the scaling model).

Generated shell text is built so that no value the user gives can run a command: every
substituted word goes through ``shlex.quote``, and the values that become ``#SBATCH`` lines
(which sbatch parses itself, not the shell) must match Slurm's own syntax, so a newline can
never start a new shell line."""
from __future__ import annotations

import json
import math
import re
import shlex

from planner_app.core.errors import InputError
from planner_app.core.hardware.collectives import COLLECTIVES, bus_factor
from planner_app.core.hardware.network import topology
from planner_app.specdb.schema import SpecDataError

MODULE = "planner_app.probe.collectives"
SAFE_ENV = {"NCCL_NVLS_ENABLE": "0"}  # no NVLink multicast (SHARP) unless the user chooses it
RESULT_SCHEMA_NAME = "planner.collectives"
RESULT_SCHEMA_VERSION = 1  # probe/collectives.py RESULT_SCHEMA
MAX_RANKS = 1 << 20
MAX_MESSAGE_BYTES = 1 << 50  # 1 PiB: far above any buffer a GPU holds (the probe's largest is 4 GiB)
MAX_BUS_GBPS = 1e5  # GB/s; above any link in spec_data/fabrics.csv (bw_gb_s <= 10,000) with margin
# Slurm's syntax for the values that become #SBATCH lines (sbatch(1)): partition and account
# names (comma-separated lists for partitions), and the time formats "minutes", "MM:SS",
# "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS".
_SLURM_NAME_RE = re.compile(r"^[A-Za-z0-9_.+@-]+(,[A-Za-z0-9_.+@-]+)*$")
_SLURM_TIME_RE = re.compile(r"^(\d+-)?\d+(:\d+){0,2}$")
_HOST_RE = re.compile(r"^[A-Za-z0-9_.:\[\]-]+$")  # host names, IPv4 and IPv6 addresses
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def _one_line(field: str, value: str) -> str:
    """``value`` with no newline or other control character (InputError naming ``field``)."""
    if _CONTROL_RE.search(value):
        raise InputError(field, f"must be one line without control characters; got {value[:60]!r}")
    return value


def _slurm_value(field: str, value: str, pattern: re.Pattern, what: str) -> str:
    _one_line(field, value)
    if not pattern.match(value):
        raise InputError(field, f"must be {what}; got {value[:60]!r}")
    return value


def _check_counts(nodes: int, gpus_per_node: int) -> None:
    if nodes < 1 or gpus_per_node < 1:
        raise InputError("nodes", "nodes and GPUs per node must be at least 1")


def torchrun_command(nodes: int, gpus_per_node: int, out: str, master_addr: str = "$MASTER_ADDR",
                     port: int = 29500, python: str = "python", quick: bool = False) -> str:
    """The command to run on every node (single node: no rendezvous needed). Every value is
    quoted for the shell; ``master_addr`` is a host name or address, or the default
    ``$MASTER_ADDR`` (expanded by the shell on each node)."""
    _check_counts(nodes, gpus_per_node)
    if not 1 <= port <= 65535:
        raise InputError("port", f"must be a TCP port from 1 to 65535; got {port}")
    args = ["--out", _one_line("out", out)] + (["--max-bytes", str(256 << 20), "--factor", "4"] if quick else [])
    launcher = [shlex.quote(_one_line("python", python)), "-m", "torch.distributed.run",
                f"--nproc-per-node={gpus_per_node}"]
    if nodes == 1:
        launcher.append("--standalone")  # a local rendezvous on a free port
    else:
        if master_addr == "$MASTER_ADDR":
            endpoint = f'"--rdzv-endpoint=$MASTER_ADDR:{port}"'  # expanded on the node, one word
        else:
            addr = _slurm_value("master_addr", master_addr, _HOST_RE, "a host name or IP address")
            endpoint = shlex.quote(f"--rdzv-endpoint={addr}:{port}")
        launcher += [f"--nnodes={nodes}", "--rdzv-backend=c10d", endpoint, "--rdzv-id=gpu-planner-probe"]
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in SAFE_ENV.items())
    return f"{env} " + " ".join(launcher + ["-m", MODULE] + [shlex.quote(a) for a in args])


def slurm_script(nodes: int, gpus_per_node: int, out: str, partition: str | None = None,
                 time_limit: str = "00:20:00", python: str = "python", account: str | None = None,
                 setup: str = "", quick: bool = False) -> str:
    """A Slurm batch script that runs the probe on ``nodes`` nodes with srun + torchrun.
    ``setup`` is a shell line of the user's (``source ~/venv/bin/activate``) and is kept as
    written, but must be one line; every other value is checked or quoted."""
    _check_counts(nodes, gpus_per_node)
    time_limit = _slurm_value("time", time_limit, _SLURM_TIME_RE, "a Slurm time limit such as 00:20:00 or 1-00:00:00")
    lines = ["#!/bin/bash", "#SBATCH --job-name=gpu-planner-probe", f"#SBATCH --nodes={int(nodes)}",
             "#SBATCH --ntasks-per-node=1", f"#SBATCH --gpus-per-node={int(gpus_per_node)}",
             f"#SBATCH --time={time_limit}", "#SBATCH --exclusive", "#SBATCH --output=gpu-planner-probe-%j.log"]
    if partition:
        lines.append("#SBATCH --partition="
                     + _slurm_value("partition", partition, _SLURM_NAME_RE, "Slurm partition names (letters, digits, "
                                    "'_.+@-', comma-separated)"))
    if account:
        lines.append("#SBATCH --account="
                     + _slurm_value("account", account, _SLURM_NAME_RE, "a Slurm account name (letters, digits, "
                                    "'_.+@-')"))
    lines += ["", "set -euo pipefail", _one_line("setup", setup or ""),
              'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
              "export MASTER_ADDR", *(f"export {k}={shlex.quote(v)}" for k, v in SAFE_ENV.items()),
              f"srun {shlex.quote(_one_line('python', python))} -m torch.distributed.run --nnodes=$SLURM_NNODES "
              f"--nproc-per-node={int(gpus_per_node)} --rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:29500 "
              f"--rdzv-id=$SLURM_JOB_ID -m {MODULE} --out {shlex.quote(_one_line('out', out))}"
              + (f" --max-bytes {256 << 20} --factor 4" if quick else ""), ""]
    return "\n".join(lines)


# ---- the result file -------------------------------------------------------------------
def _number(path, where, value, minimum=0.0, above=False, maximum=None, whole=False):
    """A finite number within range from a result file, else SpecDataError naming the field."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float))
    if ok:
        ok = (not isinstance(value, float) or math.isfinite(value)) and (value > minimum if above else value >= minimum) \
            and (maximum is None or value <= maximum) and (not whole or value == int(value))
    if not ok:
        what = "a whole number" if whole else "a finite number"
        rng = f"{'above' if above else 'of at least'} {minimum:,g}" + (f" and at most {maximum:,.0f}" if maximum else "")
        raise SpecDataError(path, None, where, f"must be {what} {rng}; got {str(value)[:40]!r}")
    return int(value) if whole else value


def _check_schema(path: str, data) -> None:
    schema = data.get("schema") if isinstance(data, dict) else None
    if not isinstance(schema, str) or not schema.startswith(RESULT_SCHEMA_NAME + "/"):
        raise SpecDataError(path, None, "schema", "is not a result of python -m planner_app.probe.collectives")
    version = schema.split("/", 1)[1]
    if not version.isdigit() or int(version) < 1:
        raise SpecDataError(path, None, "schema", f"has an unknown version {schema!r}")
    if int(version) > RESULT_SCHEMA_VERSION:
        raise SpecDataError(path, None, "schema", f"is {schema!r}, newer than this version of the app reads "
                                                  f"({RESULT_SCHEMA_NAME}/{RESULT_SCHEMA_VERSION}); update the app")


def _check_rows(path: str, rows) -> None:
    if not isinstance(rows, list) or not rows:
        raise SpecDataError(path, None, "rows", "has no measurements")
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            raise SpecDataError(path, None, f"rows[{i}]", "must be an object")
        for k in ("collective", "bytes", "ranks", "time_us", "algbw_gbps", "busbw_gbps"):
            if k not in r:
                raise SpecDataError(path, None, f"rows[{i}].{k}", "is missing")
        if r["collective"] not in COLLECTIVES:
            raise SpecDataError(path, None, f"rows[{i}].collective", f"must be one of {', '.join(COLLECTIVES)}; "
                                                                     f"got {str(r['collective'])[:40]!r}")
        _number(path, f"rows[{i}].bytes", r["bytes"], 1, maximum=MAX_MESSAGE_BYTES, whole=True)
        _number(path, f"rows[{i}].ranks", r["ranks"], 1, maximum=MAX_RANKS, whole=True)
        _number(path, f"rows[{i}].time_us", r["time_us"], 0.0, above=True, maximum=1e12)
        _number(path, f"rows[{i}].algbw_gbps", r["algbw_gbps"], 0.0, maximum=MAX_BUS_GBPS)
        _number(path, f"rows[{i}].busbw_gbps", r["busbw_gbps"], 0.0, maximum=MAX_BUS_GBPS)
        expected = r["algbw_gbps"] * bus_factor(r["collective"], r["ranks"])
        if abs(expected - r["busbw_gbps"]) > 1e-6 * max(1.0, expected):
            raise SpecDataError(path, None, f"rows[{i}].busbw_gbps", "does not match algbw x the nccl-tests factor")


def _check_environment(path: str, data: dict) -> None:
    env = data.get("environment", {})
    if not isinstance(env, dict):
        raise SpecDataError(path, None, "environment", "must be an object")
    for k in ("nodes", "world_size", "local_world_size"):
        if env.get(k) is not None:
            _number(path, f"environment.{k}", env[k], 1, maximum=MAX_RANKS, whole=True)
    devices = env.get("devices", [])
    if not isinstance(devices, list) or not all(isinstance(d, str) and len(d) <= 200 for d in devices):
        raise SpecDataError(path, None, "environment.devices", "must be a list of device names")
    if "all_reduce_correct" in data and not isinstance(data["all_reduce_correct"], (bool, type(None))):
        raise SpecDataError(path, None, "all_reduce_correct", "must be true or false")
    p2p = data.get("p2p_gbps")
    if p2p is not None:
        if not isinstance(p2p, list) or not all(isinstance(row, list) for row in p2p):
            raise SpecDataError(path, None, "p2p_gbps", "must be a matrix (a list of lists)")
        for i, row in enumerate(p2p):
            for j, v in enumerate(row):
                if v is not None:
                    _number(path, f"p2p_gbps[{i}][{j}]", v, 0.0, maximum=MAX_BUS_GBPS)


def check_result(data, path: str = "collectives result") -> dict:
    """A collectives result (parsed JSON) checked field by field: the schema and its version,
    every row's collective, sizes, ranks and bandwidths (finite, non-negative, busbw equal to
    algbw x the nccl-tests factor), the environment and the point-to-point matrix. Errors
    name the file and the field."""
    _check_schema(path, data)
    _check_rows(path, data.get("rows"))
    _check_environment(path, data)
    return data


def read_result(path: str) -> dict:
    """A collectives result file; errors name the file and what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise SpecDataError(path, None, None, f"cannot be read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise SpecDataError(path, None, None, f"is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise SpecDataError(path, e.lineno, None, f"is not valid JSON ({e.msg})") from None
    except RecursionError:
        raise SpecDataError(path, None, None, "is nested too deeply to be a result file") from None
    return check_result(data, path)


def best_busbw(data: dict, collective: str = "all_reduce") -> float | None:
    rows = [r for r in data["rows"] if r["collective"] == collective]
    return max((r["busbw_gbps"] for r in rows), default=None)


def collective_verdicts(data: dict, gpu, intra, inter, nics_per_node: int = 8) -> list[dict]:
    """Measured all-reduce bus bandwidth against what the links should give: inside a node
    the GPU's NVLink per direction (or the PCIe rate) times the fabric's efficiency, the
    engine's own assumption (``core.network.topology``); across nodes the node's aggregate
    NIC rate times its efficiency (a ring's busbw approaches it, nccl-tests PERFORMANCE.md)."""
    env = data.get("environment") or {}
    nodes = env.get("nodes") or 1  # null in the file: one node, as when it is missing
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
    return db.intra_link(gpu)


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
