"""``gpu-planner host-probe``: storage bandwidth of a folder, JPEG decode rate per core and host
memory bandwidth, measured in a worker process (probe/host_worker.py through probe/runner.py's
ProbeRunner), with verdicts against the planner's defaults; ``-o FILE`` saves the result for
``estimate --host-probe FILE``."""
from __future__ import annotations

import json
import sys
import tempfile

from planner_app.probe.runner import ProbeError, ProbeRunner


def add_parser(sub, positive_int) -> None:
    p = sub.add_parser("host-probe", help="storage, JPEG decode and memory bandwidth of this host")
    p.add_argument("--folder", default=None, help="folder on the disk to measure (default: the temp folder)")
    p.add_argument("--size-mb", type=positive_int("--size-mb"), default=1024, help="test file size in MiB")
    p.add_argument("--images", type=positive_int("--images"), default=200, help="JPEGs to decode")
    p.add_argument("--timeout", type=positive_int("--timeout"), default=600, help="seconds before the worker is stopped")
    p.add_argument("--python", help="the Python interpreter that runs the probe")
    p.add_argument("-o", "--output", help="write the JSON result to this file (for estimate --host-probe)")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    # lazy: keeps the engine off the CLI's start (its parser imports this module)
    from planner_app.probe.host import HostProbeError, check_folder, host_verdicts

    # lazy: keeps the engine off the CLI's start (its parser imports this module)
    from planner_app.probe.host_worker import host_command

    size = args.size_mb * 2**20
    try:  # a bad folder is one line before any process starts
        folder = check_folder(args.folder or tempfile.gettempdir(), size)
    except HostProbeError as e:
        print(f"gpu-planner host-probe: error: --folder: {e}", file=sys.stderr)
        return 2
    work = {"folder": folder, "size_bytes": size, "images": args.images}
    runner = ProbeRunner(timeout_s=args.timeout, command=host_command(work, args.python))

    def show(f, text):
        if not args.json:
            print(f"\r  [{f:4.0%}] {text[:60]:60s}", end="", file=sys.stderr, flush=True)

    try:
        result = runner.run("host", work, progress=show)
    except ProbeError as e:
        print(("\n" if not args.json else "") + f"gpu-planner host-probe: error: {e}", file=sys.stderr)
        return 1
    result["verdicts"] = host_verdicts(result)
    result["command"] = (f"gpu-planner host-probe --folder {folder} --size-mb {args.size_mb} --images {args.images}"
                         + (f" -o {args.output}" if args.output else ""))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    s, d, m, h = result["storage"], result["decode"], result["memory"], result["host"]
    print(f"\rhost: {h['cpus']} CPUs, {h['ram_bytes'] / 1e9:,.1f} GB RAM" + " " * 40)
    print(f"storage {s['folder']} ({'direct I/O' if s['direct_io'] else 'buffered + fsync'}, "
          f"{s['size_bytes'] / 2**20:,.0f} MiB): write {s['write_gb_s']:.2f} GB/s, read {s['read_gb_s']:.2f} GB/s")
    if d.get("images_per_s_per_core") is None:
        print(f"JPEG decode: not measured: {d.get('error', '')}")
    else:
        print(f"JPEG decode + augment: {d['images_per_s_per_core']:,.1f} images/s per core "
              f"({d['ms_per_image']:.2f} ms, {d['jpeg_bytes_mean'] / 1e3:,.0f} kB JPEGs)")
    print(f"memory copy: {m['copy_gb_s']:.1f} GB/s")
    for v in result["verdicts"]:
        print("  " + v["text"])
    if args.output:
        print(f"saved {args.output} (use: gpu-planner estimate ... --host-probe {args.output})")
    return 0
