"""The ResNet-50 input-pipeline check of issue 19, for a GPU machine: the host probe, then a
torchvision/PIL DataLoader with N workers feeding a ResNet-50 training step (amp-bf16, fused
AdamW, batch 256, channels_last), images/s measured against the plan's prediction (the engine's
GPU rate and input pipeline, calibrated by that host probe), plus the GPU alone on synthetic
batches and the host RAM of the training process and its workers. JPEGs are generated there
(500x375, ~105 kB, like ImageNet's): no dataset.

    python -m benchmarks.gpu.resnet50_loader --out DIR [--workers 15,8]

Writes DIR/host_probe_<gpu>.json and DIR/resnet50_loader_<gpu>.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

BATCH = 256


def engine_prediction(probe: dict, cpus: int, workers: int) -> dict:
    """The plan's numbers: the engine's images/s on this GPU and the input pipeline with ``workers``
    loader processes (the cores they can use), calibrated by the host probe."""
    from planner_app.core.training.host import HostRates, input_pipeline
    from planner_app.service.catalog import open_catalog
    from planner_app.service.estimate import estimate_json
    from planner_app.service.resolve import resolve_model

    db = open_catalog()
    est = estimate_json({"model": "resnet-50", "gpu": "h200", "micro_batch": BATCH}, db)
    gpu_images_s = est["time"]["tokens_per_s"]
    # the loader gets ``workers`` cores (plus one for the training process, as the plan reserves)
    pipe = input_pipeline(resolve_model("resnet-50", db), gpu_images_s, 1, 1, 1, min(workers + 1, cpus), 0, 0,
                          HostRates().calibrated(probe))
    return {"gpu_images_per_s": gpu_images_s, "verdict": pipe["verdict"],
            "images_per_s": pipe["samples_per_s_per_node_fed"], "pipeline": pipe}


def write_jpegs(folder: str, n_unique: int, n_files: int) -> list[str]:
    from planner_app.probe.host import make_jpegs

    os.makedirs(folder, exist_ok=True)
    data = make_jpegs(n_unique)
    paths = []
    for i in range(n_files):
        p = os.path.join(folder, f"{i:06d}.jpg")
        with open(p, "wb") as f:
            f.write(data[i % n_unique])
        paths.append(p)
    return paths


class JpegFolder:
    """A map-style dataset of JPEG files with the torchvision ImageNet training transform."""

    def __init__(self, paths, length):
        import torchvision.transforms as T

        self.paths, self.length = paths, length
        self.tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                             T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        from PIL import Image

        with open(self.paths[i % len(self.paths)], "rb") as f:
            img = Image.open(f).convert("RGB")
        return self.tf(img), i % 1000


def rss_bytes(pid: int) -> dict:
    import psutil

    p = psutil.Process(pid)
    try:
        full = p.memory_full_info()
        return {"rss": full.rss, "pss": getattr(full, "pss", None), "uss": getattr(full, "uss", None)}
    except (psutil.Error, OSError):
        return {"rss": p.memory_info().rss}


def train_setup():
    import torch
    import torchvision

    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def gpu_only(step, steps=30) -> float:
    import torch

    torch.backends.cudnn.benchmark = True
    x = torch.randn(BATCH, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (BATCH,), device="cuda")
    for _ in range(8):
        step(x, y)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step(x, y)
    torch.cuda.synchronize()
    return steps * BATCH / (time.perf_counter() - t0)


def with_loader(step, paths, workers, seconds=25.0, warm=6) -> dict:
    import psutil
    import torch

    ds = JpegFolder(paths, 10**7)
    dl = torch.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers, pin_memory=True,
                                     drop_last=True, persistent_workers=True, prefetch_factor=2)
    it = iter(dl)
    for _ in range(warm):
        x, y = next(it)
        step(x.cuda(non_blocking=True).to(memory_format=torch.channels_last), y.cuda(non_blocking=True))
    torch.cuda.synchronize()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        x, y = next(it)
        step(x.cuda(non_blocking=True).to(memory_format=torch.channels_last), y.cuda(non_blocking=True))
        n += 1
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    me = psutil.Process()
    kids = [rss_bytes(c.pid) for c in me.children(recursive=True)]
    out = {"workers": workers, "steps": n, "seconds": dt, "images_per_s": n * BATCH / dt,
           "main_process": rss_bytes(os.getpid()), "worker_processes": kids}
    del it, dl
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", default="15,8")
    ap.add_argument("--seconds", type=float, default=25.0)
    ap.add_argument("--probe-mb", type=int, default=1024)
    args = ap.parse_args(argv)
    import torch
    import torchvision

    from planner_app.probe.host import host_verdicts, run_host_probe

    os.makedirs(args.out, exist_ok=True)
    gpu = torch.cuda.get_device_name(0)
    tag = "h200" if "H200" in gpu else gpu.split()[-1].lower()
    probe = run_host_probe({"folder": "/tmp", "size_bytes": args.probe_mb * 2**20, "images": 300})
    probe["verdicts"] = host_verdicts(probe)
    probe["command"] = f"run_host_probe folder=/tmp size_bytes={args.probe_mb} MiB images=300 (from {__file__})"
    with open(os.path.join(args.out, f"host_probe_{tag}.json"), "w") as f:
        json.dump(probe, f, indent=1)
    print("probe", json.dumps({k: probe[k] for k in ("host", "storage", "decode", "memory")}), flush=True)
    cpus = probe["host"]["cpus"]
    paths = write_jpegs("/tmp/i19_jpegs", 256, 4096)
    step = train_setup()
    doc = {"command": "python -m benchmarks.gpu.resnet50_loader --out $OUT --workers " + args.workers,
           "gpu": gpu, "torch": torch.__version__, "torchvision": torchvision.__version__,
           "python": sys.version.split()[0], "cpus": cpus, "batch": BATCH,
           "recipe": "amp-bf16 (torch.autocast bf16), fused AdamW, channels_last, cudnn.benchmark",
           "jpegs": {"files": len(paths), "unique": 256, "bytes_mean": probe["decode"]["jpeg_bytes_mean"]},
           "host_probe": {"decode_images_per_s_per_core": probe["decode"]["images_per_s_per_core"],
                          "write_gb_s": probe["storage"]["write_gb_s"], "read_gb_s": probe["storage"]["read_gb_s"]}}
    doc["gpu_only_images_per_s"] = gpu_only(step)
    print("gpu only", doc["gpu_only_images_per_s"], flush=True)
    doc["runs"] = []
    for w in [int(x) for x in args.workers.split(",")]:
        run = with_loader(step, paths, w, args.seconds)
        try:
            run["prediction"] = engine_prediction(probe, cpus, w)
            run["measured_over_predicted"] = run["images_per_s"] / run["prediction"]["images_per_s"]
        except Exception as e:  # noqa: BLE001 - the measurement stands; the prediction is redone locally
            run["prediction_error"] = f"{type(e).__name__}: {e}"
        doc["runs"].append(run)
        print("run", json.dumps({k: v for k, v in run.items() if k != "worker_processes"}), flush=True)
        with open(os.path.join(args.out, f"resnet50_loader_{tag}.json"), "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
