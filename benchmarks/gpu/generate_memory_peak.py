"""Replay a CUDA caching-allocator history of one generate() call
(benchmarks/gpu/gpu_generate_memory_trace.py) and list what is alive at the peak, grouped by the
transformers / torch.nn source line that allocated it. Runs anywhere (offline, on the CPU).

    python -m benchmarks.gpu.generate_memory_peak trace_1b.pickle trace_7b.pickle --out peaks.json
"""
from __future__ import annotations

import argparse
import collections
import json
import pickle


def _site(event) -> str:
    names = []
    for f in event.get("frames") or []:
        fn = f["filename"]
        if "transformers" in fn or "torch/nn" in fn:
            names.append(f"{fn.split('/')[-1]}:{f['line']} {f['name']}")
        if len(names) >= 3:
            break
    return " <- ".join(names)


def peak_of(trace: dict) -> dict:
    events = trace["device_traces"][0]
    live, cur = {}, trace["start_bytes"]
    peak, at = cur, {}
    for e in events:
        if e["action"] == "alloc":
            live[e["addr"]] = e
            cur += e["size"]
            if cur > peak:
                peak, at = cur, dict(live)
        elif e["action"] == "free_requested" and e["addr"] in live:
            cur -= live.pop(e["addr"])["size"]
    sites = collections.defaultdict(lambda: [0, 0])
    for e in at.values():
        s = sites[_site(e)]
        s[0] += e["size"]
        s[1] += 1
    return {"config": trace["config"], "batch": trace["batch"], "prompt": trace["prompt"], "new": trace["new"],
            "start_bytes": trace["start_bytes"], "peak_bytes_replayed": peak,
            "peak_bytes_reported": trace["peak_bytes"],
            "alive_at_peak": [{"site": k, "bytes": v[0], "tensors": v[1]}
                              for k, v in sorted(sites.items(), key=lambda kv: -kv[1][0]) if v[0] > 1e6]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--out", default="generate_memory_peak.json")
    args = ap.parse_args()
    out = {"command": "python -m benchmarks.gpu.generate_memory_peak " + " ".join(args.traces),
           "traces_made_by": "python -m benchmarks.gpu.gpu_generate_memory_trace (H200, torch 2.11, transformers 5.17)",
           "peaks": []}
    for path in args.traces:
        with open(path, "rb") as f:
            out["peaks"].append(peak_of(pickle.load(f)))
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
