"""Reference figures for the probe, measured the plainest way in the same session:
the best ``torch.matmul`` bf16 rate over square sizes 4096-16384 and a 2 GiB
``torch.Tensor.copy_`` (read+write bytes per second). Run on the GPU machine::

    python -m benchmarks.gpu.probe_reference --out probe_reference.json
"""
import argparse
import json
import statistics


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    import torch

    rows = []
    for n in (4096, 6144, 8192, 12288, 16384):
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            torch.matmul(a, b)
        times = []
        for _ in range(10):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            torch.matmul(a, b)
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) / 1e3)
        rows.append({"n": n, "tflops": 2 * n**3 / statistics.median(times) / 1e12})
        del a, b
    src = torch.randn((2 << 30) // 4, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(20):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        dst.copy_(src)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) / 1e3)
    copy_gbps = 2 * (2 << 30) / statistics.median(times) / 1e9
    out = {"command": "python -m benchmarks.gpu.probe_reference", "device": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "matmul_bf16": rows, "best_matmul_bf16_tflops": max(r["tflops"] for r in rows),
           "copy_2gib_gbps_read_write": copy_gbps}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps({k: v for k, v in out.items() if k != "matmul_bf16"}))


if __name__ == "__main__":
    main()
