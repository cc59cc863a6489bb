"""The host probe (issue 19): bad folders are one clear line; the measurements are real and
clean up after themselves; the worker runs through probe/runner.py's ProbeRunner (isolated,
cancellable, stopped at its timeout); the committed results calibrate estimates."""
import errno
import json
import os
import shutil
import tempfile
import threading
import time

import pytest

from planner_app.probe import host
from planner_app.probe.host import HostProbeError, check_folder
from planner_app.probe.host_worker import host_command
from planner_app.probe.runner import ProbeCancelled, ProbeError, ProbeRunner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MiB = 2**20


def test_a_missing_folder_is_one_line(tmp_path):
    with pytest.raises(HostProbeError) as e:
        check_folder(str(tmp_path / "nope"), MiB)
    assert "does not exist" in str(e.value) and "\n" not in str(e.value)


def test_a_file_is_not_a_folder(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(HostProbeError, match="is not a folder"):
        check_folder(str(f), MiB)


def test_a_read_only_folder_is_one_line(tmp_path, monkeypatch):
    def refuse(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(HostProbeError) as e:
        check_folder(str(tmp_path), MiB)
    assert "read-only or not writable (Read-only file system)" in str(e.value)


@pytest.mark.skipif(not os.path.isdir("/sys") or os.access("/sys", os.W_OK) and os.geteuid() != 0,
                    reason="needs sysfs, which refuses new files")
def test_sysfs_is_read_only_for_real():
    with pytest.raises(HostProbeError, match="read-only or not writable"):
        check_folder("/sys", MiB)


def test_a_full_folder_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(100 * MiB, 99 * MiB, MiB))
    with pytest.raises(HostProbeError) as e:
        check_folder(str(tmp_path), 16 * MiB)
    assert "is full: 1 MB free, the probe writes a 17 MB file" in str(e.value)


def test_a_disk_that_fills_while_writing_is_one_line(tmp_path, monkeypatch):
    real_write = os.write
    calls = {"n": 0}

    def write(fd, data):
        calls["n"] += 1
        if calls["n"] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(HostProbeError, match="is full: the disk ran out of space"):
        host.storage_bandwidth(str(tmp_path), 32 * MiB)
    assert os.listdir(tmp_path) == []  # the test file is gone


def test_storage_bandwidth_measures_and_cleans_up(tmp_path):
    r = host.storage_bandwidth(str(tmp_path), 32 * MiB)
    assert r["size_bytes"] == 32 * MiB and r["write_gb_s"] > 0 and r["read_gb_s"] > 0
    assert abs(r["write_gb_s"] - r["size_bytes"] / r["write_s"] / 1e9) < 1e-9
    assert os.listdir(tmp_path) == []


def test_decode_rate_uses_imagenet_sized_jpegs():
    jpegs = host.make_jpegs(3)
    import io

    from PIL import Image

    assert Image.open(io.BytesIO(jpegs[0])).size == host.JPEG_SIZE
    assert all(60e3 < len(j) < 200e3 for j in jpegs)  # ImageNet's mean is 115 kB
    import numpy as np

    out = host.train_transform(jpegs[0], np.random.default_rng(0))
    assert out.shape == (3, 224, 224) and out.dtype == np.float32
    r = host.decode_rate(images=8)
    assert r["images_per_s_per_core"] > 0 and abs(r["ms_per_image"] * r["images_per_s_per_core"] - 1e3) < 1e-6


def test_memory_bandwidth_is_bytes_over_time():
    r = host.memory_bandwidth(16 * MiB, repeats=2)
    assert r["copy_gb_s"] > 0 and r["bytes"] == 16 * MiB


def test_the_worker_runs_through_the_probe_runner(tmp_path):
    args = {"folder": str(tmp_path), "size_bytes": 16 * MiB, "images": 4}
    seen = []
    result = ProbeRunner(timeout_s=120, command=host_command(args)).run("host", args,
                                                                         progress=lambda f, t: seen.append(t))
    assert {"host", "storage", "decode", "memory"} <= result.keys()
    assert result["storage"]["folder"] == str(tmp_path) and "writing" in seen
    assert [v["what"] for v in host.host_verdicts(result)] == ["storage write", "storage read",
                                                               "JPEG decode + augment per core"]


def test_a_bad_folder_in_the_worker_is_one_line(tmp_path):
    args = {"folder": str(tmp_path / "gone"), "size_bytes": MiB, "images": 1}
    with pytest.raises(ProbeError) as e:
        ProbeRunner(timeout_s=60, command=host_command(args)).run("host", args)
    assert str(e.value) == f"the probe failed: folder {str(tmp_path / 'gone')!r} does not exist; choose an " \
                           "existing folder on the disk to measure"


@pytest.mark.parametrize("argv", [["{not json"], ["[1, 2]"]])
def test_the_host_worker_refuses_arguments_that_are_not_a_json_object(argv, capsys):
    from planner_app.probe import host_worker

    assert host_worker.main(argv) == 2
    line = json.loads(capsys.readouterr().out.strip())
    assert line == {"type": "error", "message": "the host probe's arguments must be a JSON object"}


def test_cancel_kills_the_host_worker(tmp_path):
    args = {"folder": str(tmp_path), "size_bytes": 16 * MiB, "images": 10**7}  # hours of decoding
    r = ProbeRunner(timeout_s=300, command=host_command(args))
    started = threading.Event()
    threading.Thread(target=lambda: (started.wait(60), time.sleep(0.3), r.cancel()), daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(ProbeCancelled):
        r.run("host", args, progress=lambda f, t: started.set() if t == "decoding JPEGs" else None)
    assert time.monotonic() - t0 < 60
    assert r._proc is None  # reaped


def test_the_timeout_stops_the_host_worker(tmp_path):
    args = {"folder": str(tmp_path), "size_bytes": 16 * MiB, "images": 10**7}
    with pytest.raises(ProbeError, match="did not finish within 3 s"):
        ProbeRunner(timeout_s=3, command=host_command(args)).run("host", args)
    assert os.listdir(tmp_path) == []  # stopped while decoding: the storage part had removed its file


def test_cli_bad_folder_exit_2_one_line(capsys, tmp_path):
    import planner_app.cli as cli

    rc = cli.main(["host-probe", "--folder", str(tmp_path / "missing")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("gpu-planner host-probe: error: --folder: folder")


@pytest.mark.parametrize("name", ["host_probe_local.json", "host_probe_h200.json"])
def test_the_committed_probe_results_calibrate_an_estimate(name):
    from planner_app.service.catalog import open_catalog
    from planner_app.service.estimate import estimate_json

    path = os.path.join(ROOT, "tests", "data", name)
    with open(path, encoding="utf-8") as f:
        probe = json.load(f)
    assert "host-probe" in probe["command"] and probe["storage"]["size_bytes"] >= 2**30
    e = estimate_json({"model": "resnet-50", "instance": "p4d.24xlarge", "gpus": 8, "micro_batch": 256,
                               "host_probe": path}, open_catalog())["host"]
    assert e["input"]["samples_per_s_per_core"] == probe["decode"]["images_per_s_per_core"]
    assert e["checkpoint"]["write_gb_s_per_node"] == probe["storage"]["write_gb_s"]
