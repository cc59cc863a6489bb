"""``gpu-planner cluster``: write the torchrun command or Slurm script that runs the
collective probe on the user's cluster, and import its result file into a calibration
profile (verdicts against the expected link rate)."""
from __future__ import annotations

import json
import sys

from planner_app.atomic import atomic_write_text
from planner_app.cli.arguments import arg_type, own_option
from planner_app.core.errors import InputError


def add_parser(sub, positive_int) -> None:
    c = sub.add_parser("cluster", help="collective bandwidth probe on a multi-GPU server or cluster")
    csub = c.add_subparsers(dest="cluster_command", metavar="{command,slurm,import}")
    for name, help_text in (("command", "print the torchrun command to run on each node"),
                            ("slurm", "print (or write) a Slurm batch script")):
        p = csub.add_parser(name, help=help_text)
        p.add_argument("--nodes", type=positive_int("--nodes"), default=1)
        p.add_argument("--gpus-per-node", type=positive_int("--gpus-per-node"), default=8)
        p.add_argument("--out", default="gpu-planner-collectives.json", help="result file written by rank 0")
        p.add_argument("--python", default="python", help="the Python with torch on the cluster")
        p.add_argument("--quick", action="store_true", help="messages up to 256 MiB only")
        if name == "command":
            p.add_argument("--master-addr", default="$MASTER_ADDR")
            p.add_argument("--port", type=arg_type(own_option("port", "int", "", minimum=1, maximum=65535)),
                           default=29500)
        else:
            p.add_argument("--partition")
            p.add_argument("--account")
            p.add_argument("--time", default="00:20:00", help="Slurm time limit (HH:MM:SS)")
            p.add_argument("--setup", default="", help="shell line run first, e.g. 'source ~/venv/bin/activate'")
            p.add_argument("-o", "--output", help="write the script here instead of printing it")
    i = csub.add_parser("import", help="read a result file, print verdicts, save it in a calibration profile")
    i.add_argument("result")
    i.add_argument("--profile", help="calibration profile to add the bandwidths to (created if missing)")
    i.add_argument("--gpu", help="GPU model, when the device names in the file do not match one")
    i.add_argument("--intra", help="intra-node fabric id to compare with (default: the GPU's NVLink or PCIe)")
    i.add_argument("--inter", default="ib-ndr", help="inter-node fabric id to compare with")
    i.add_argument("--nics-per-node", type=positive_int("--nics-per-node"), default=8)
    i.add_argument("--json", action="store_true")


def run(args) -> int:
    # lazy: keeps the probe code off the CLI's start (its parser imports this module)
    from planner_app.probe import cluster

    cmd = args.cluster_command
    if cmd == "command":
        print(cluster.torchrun_command(args.nodes, args.gpus_per_node, args.out, args.master_addr, args.port,
                                       args.python, args.quick))
        if args.nodes > 1:
            print(f"# run the line above on each of the {args.nodes} nodes with MASTER_ADDR set to the first node",
                  file=sys.stderr)
        return 0
    if cmd == "slurm":
        text = cluster.slurm_script(args.nodes, args.gpus_per_node, args.out, args.partition, args.time,
                                    args.python, args.account, args.setup, quick=args.quick)
        if args.output:
            try:
                atomic_write_text(args.output, text)
            except OSError as e:
                raise InputError("output", f"cannot write {args.output}: {e.strerror or e}") from None
            print(f"wrote {args.output}; submit it with: sbatch {args.output}", file=sys.stderr)
        else:
            sys.stdout.write(text)
        return 0
    if cmd == "import":
        return _import(args)
    raise InputError("cluster", "choose one of: command, slurm, import")


def _import(args) -> int:
    # lazy: keeps the probe code off the CLI's start (its parser imports this module)
    from planner_app.probe import cluster

    # lazy: keeps the engine off the CLI's start (its parser imports this module)
    from planner_app.service.catalog import open_catalog
    from planner_app.service.validation import match_gpu  # lazy: keeps the engine off the CLI's start
    from planner_app.specdb.userdb import UserDB  # lazy: sqlite3 is optional (a Python built without it)

    data = cluster.read_result(args.result)
    db = open_catalog()  # the user's own GPUs and fabrics too
    env = data.get("environment", {})
    devices = env.get("devices") or []
    gpu = db.gpu(args.gpu) if args.gpu else match_gpu(db, devices[0] if devices else None)
    intra = db.fabric(args.intra) if args.intra else cluster.default_intra_fabric(db, gpu)
    inter = db.fabric(args.inter) if args.inter else None
    verdicts = cluster.collective_verdicts(data, gpu, intra, inter, args.nics_per_node)
    udb = UserDB.open_default()
    udb.add_collectives(args.profile or args.result, data)
    if args.profile:
        cluster.attach_to_profile(udb, args.profile, data, gpu)
    summary = cluster.summary(data)
    if args.json:
        print(json.dumps({"summary": summary, "verdicts": verdicts, "profile": args.profile}, indent=1))
        return 0
    print(f"{env.get('world_size', '?')} ranks on {env.get('nodes', '?')} node(s), backend {env.get('backend')}, "
          f"{', '.join(sorted(set(devices))) or 'unknown devices'}; all-reduce check "
          f"{'passed' if data.get('all_reduce_correct') else 'FAILED'}")
    for name, row in summary["largest"].items():
        print(f"  {name:<15} {row['bytes'] / 2**20:>9,.0f} MiB  algbw {row['algbw_gbps']:>8,.1f} GB/s  "
              f"busbw {row['busbw_gbps']:>8,.1f} GB/s")
    if summary["p2p_min_gbps"] is not None:
        print(f"  point-to-point  {summary['p2p_min_gbps']:,.0f} to {summary['p2p_max_gbps']:,.0f} GB/s between pairs")
    for v in verdicts:
        print(("  " if v["status"] == "normal" else "  ! ") + v["text"])
    if int(env.get("world_size") or 0) < 2:
        print("  one rank: bus bandwidth needs two or more GPUs (the launch path ran; run it on a multi-GPU node)")
    if gpu is None:
        print("  (no GPU model matched the device names; pass --gpu to compare with a datasheet)")
    if args.profile:
        print(f"saved in calibration profile {args.profile!r}: estimates with --calibration {args.profile} "
              "use these bandwidths")
    return 0
