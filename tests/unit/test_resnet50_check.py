"""The ResNet-50 example of issue 19 against the real run on the H200 machine
(tests/data/resnet50_loader_h200.json, benchmarks/gpu/resnet50_loader.py): a torchvision/PIL
DataLoader with N workers feeding a ResNet-50 training step. The plan, calibrated by that
machine's host probe (tests/data/host_probe_h200.json), predicts the images/s within 20%."""
import json
import os

import pytest

from planner_app.core.training.host import HostRates, input_pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(name):
    with open(os.path.join(ROOT, "tests", "data", name), encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def plan():
    from planner_app.service.catalog import open_catalog
    from planner_app.service.estimate import estimate_json
    from planner_app.service.resolve import resolve_model

    db = open_catalog()
    est = estimate_json({"model": "resnet-50", "gpu": "h200", "micro_batch": 256}, db)
    return resolve_model("resnet-50", db), est


@pytest.mark.parametrize("workers", [15, 8])
def test_loader_fed_images_per_s_within_20_percent(plan, workers):
    model, est = plan
    run = next(r for r in _load("resnet50_loader_h200.json")["runs"] if r["workers"] == workers)
    probe = _load("host_probe_h200.json")
    # the loader's cores (plus one for the training process, which the plan reserves)
    pipe = input_pipeline(model, est["time"]["tokens_per_s"], 1, 1, 1, workers + 1, 0, 0,
                          HostRates().calibrated(probe))
    assert pipe["verdict"] == "cpu-bound" and pipe["workers_per_gpu"] == workers
    predicted = pipe["samples_per_s_per_node_fed"]
    assert abs(run["images_per_s"] / predicted - 1) <= 0.20, (run["images_per_s"], predicted)


def test_the_gpu_alone_is_faster_than_the_loader_so_the_run_was_cpu_bound():
    doc = _load("resnet50_loader_h200.json")
    assert all(r["images_per_s"] < 0.6 * doc["gpu_only_images_per_s"] for r in doc["runs"])
    assert doc["cpus"] == 16 and doc["batch"] == 256


def test_host_ram_constants_cover_what_the_run_used():
    from planner_app.core.training import host as H

    for r in _load("resnet50_loader_h200.json")["runs"]:
        assert r["main_process"]["pss"] <= H.TRAINING_PROCESS_HOST_BYTES * 1.02
        assert r["worker_pss_bytes_max"] <= H.LOADER_WORKER_HOST_BYTES * 1.05
