"""Host RAM against the instance's and the input pipeline's verdict (issue 19): core/training/host.py
and the ``host`` key of the estimate (service/host.py)."""
import json
import math

import pytest

from planner_app.core.errors import InputError
from planner_app.core.training import host as H


@pytest.fixture(scope="module")
def db():
    from planner_app.service.catalog import open_catalog

    return open_catalog()


def _est(db, **opts):
    from planner_app.service.estimate import estimate_json

    return estimate_json(opts, db)


def test_host_ram_parts_sum_and_the_limit():
    r = H.host_ram(10e9, 8, 4, 1e9, ram_bytes=200e9)
    assert math.isclose(sum(r["parts"].values()), r["needed_bytes"])
    assert r["parts"]["offloaded_states"] == 80e9 and r["parts"]["pinned_batches"] == 8e9
    assert r["fits"] is (r["needed_bytes"] <= 200e9 * H.HOST_RAM_USABLE_FRACTION)
    tight = H.host_ram(10e9, 8, 4, 1e9, ram_bytes=r["needed_bytes"] / H.HOST_RAM_USABLE_FRACTION * 0.999)
    assert tight["fits"] is False
    assert H.host_ram(1e9, 1, 1, 0, None)["fits"] is None


def test_offloaded_states_are_the_engines_host_bytes_times_the_gpus_of_a_node(db):
    base = dict(model="llama-2-13b", instance="p4d.24xlarge", gpus=8, recipe="mixed-bf16", zero=2)
    off = _est(db, **base, offload="optimizer")
    none = _est(db, **base)
    assert off["memory"]["host_bytes"] > 0 and none["memory"]["host_bytes"] == 0
    assert math.isclose(off["host"]["ram"]["parts"]["offloaded_states"], 8 * off["memory"]["host_bytes"])
    assert none["host"]["ram"]["parts"]["offloaded_states"] == 0
    assert off["host"]["ram"]["ram_bytes"] == db.instance("p4d.24xlarge").ram_gb * 1e9


def test_an_offload_that_does_not_fit_the_host_says_so_and_the_same_plan_without_it_fits(db):
    # 405B, ZeRO-3 with parameter offload on one p4d (1.15 TB of RAM): ~18 B/param on the host
    base = dict(model="llama-3.1-405b", instance="p4d.24xlarge", gpus=8, recipe="mixed-bf16", zero=3,
                recompute="full")
    off = _est(db, **base, offload="params")["host"]
    assert off["ram"]["fits"] is False
    assert off["ram"]["needed_bytes"] > off["ram"]["ram_bytes"]
    assert any(a.startswith("the CPU offload does not fit the host") for a in off["advice"])
    plain = _est(db, **base)["host"]
    assert plain["ram"]["fits"] is True and not any("offload" in a for a in plain["advice"])


def test_cli_json_carries_the_host_keys(capsys):
    import planner_app.cli as cli

    rc = cli.main(["estimate", "--model", "gpt2", "--instance", "p4d.24xlarge", "--json"])
    host = json.loads(capsys.readouterr().out)["host"]
    assert rc == 0
    assert {"checkpoint", "ram", "input", "advice"} <= host.keys()
    assert {"needed_bytes", "ram_bytes", "fits", "parts"} <= host["ram"].keys()
    assert {"verdict", "samples_per_s_per_node", "workers_per_gpu", "cores_needed_per_node"} <= host["input"].keys()


def test_text_bytes_per_sample_follow_the_vocabulary(db):
    from planner_app.service.resolve import resolve_model

    gpt2, llama3 = resolve_model("gpt2", db), resolve_model("llama-3.1-8b", db)
    assert H.sample_bytes(gpt2, 1024) == (2048.0, "tokens")  # 50,257 ids fit uint16
    assert H.sample_bytes(llama3, 1024) == (4096.0, "tokens")  # 128,256 ids need int32


def test_text_is_fed_and_reads_tokens_per_s_times_bytes(db):
    e = _est(db, model="llama-3.1-8b", instance="p5.48xlarge", gpus=8, micro_batch=2, seq_len=4096)
    p = e["host"]["input"]
    assert p["verdict"] == "fed"
    assert math.isclose(p["read_gb_s_per_node"], e["time"]["tokens_per_s"] * 4 / 1e9)


def test_resnet50_on_p5_is_cpu_or_storage_bound_and_needs_many_workers(db):
    e = _est(db, model="resnet-50", instance="p5.48xlarge", gpus=8, micro_batch=256)
    p = e["host"]["input"]
    inst = db.instance("p5.48xlarge")
    images_s = e["time"]["tokens_per_s"]
    assert math.isclose(p["samples_per_s_per_node"], images_s)
    assert math.isclose(p["read_gb_s_per_node"], images_s * H.IMAGENET_MEAN_JPEG_BYTES / 1e9)
    assert math.isclose(p["cores_needed_per_node"], images_s / H.DECODE_IMAGES_PER_S_PER_CORE)
    free = inst.vcpu - 8 * H.CORES_PER_TRAINING_PROCESS
    assert math.isclose(p["cpu_samples_per_s_per_node"], free * H.DECODE_IMAGES_PER_S_PER_CORE)
    assert p["verdict"] in ("cpu-bound", "storage-bound")
    assert p["workers_per_gpu"] == free // 8 < p["workers_per_gpu_needed"]
    assert p["samples_per_s_per_node_fed"] == min(p["cpu_samples_per_s_per_node"], p["storage_samples_per_s_per_node"])
    assert any(a.startswith("the input pipeline is") for a in e["host"]["advice"])


def test_a_host_probe_calibrates_decode_and_storage(db, tmp_path):
    probe = {"storage": {"read_gb_s": 50.0, "write_gb_s": 5.0}, "decode": {"images_per_s_per_core": 10000.0}}
    f = tmp_path / "host.json"
    f.write_text(json.dumps(probe))
    e = _est(db, model="resnet-50", instance="p5.48xlarge", gpus=8, micro_batch=256, host_probe=str(f))
    p, c = e["host"]["input"], e["host"]["checkpoint"]
    assert p["rates_source"] == "host probe" and p["samples_per_s_per_core"] == 10000.0
    assert p["storage_read_gb_s"] == 50.0 and p["verdict"] == "fed"
    assert c["write_gb_s_per_node"] == 5.0 and c["write_source"] == "host probe"


@pytest.mark.parametrize("content,needle", [(None, "cannot read"), ("not json", "is not JSON"),
                                            ('{"a": 1}', "not a host probe result")])
def test_a_bad_host_probe_file_names_the_option(db, tmp_path, content, needle):
    f = tmp_path / "p.json"
    if content is not None:
        f.write_text(content)
    with pytest.raises(InputError) as e:
        _est(db, model="gpt2", gpu="h100-sxm", host_probe=str(f))
    assert e.value.field == "host_probe" and needle in str(e.value)


def test_workers_and_pinned_batches_scale_with_the_batch():
    from planner_app.core.models.spec import ModelSpec

    cnn = ModelSpec(name="c", arch="cnn", params_given=1000, fwd_flops_per_sample=1.0, act_bytes_per_sample_fp32=1.0)
    one = H.loader_pinned_bytes(cnn, 64, 1, 4)
    assert one == (H.PREFETCH_FACTOR * 4 + 1) * 64 * 3 * 224 * 224 * 4
    assert H.loader_pinned_bytes(cnn, 128, 1, 4) == 2 * one


def test_cli_text_shows_the_host_lines(capsys, db):
    import planner_app.cli as cli
    from planner_app import units

    assert cli.main(["estimate", "--model", "resnet-50", "--instance", "p5.48xlarge", "--gpus", "8",
                     "--micro-batch", "256"]) == 0
    text = capsys.readouterr().out
    e = _est(db, model="resnet-50", instance="p5.48xlarge", gpus=8, micro_batch=256)["host"]
    assert f"Checkpoint: {units.fmt_bytes(e['checkpoint']['resumable_bytes'])} resumable" in text
    assert f"Input pipeline: {e['input']['verdict']}" in text
    assert "Advice: the input pipeline is" in text
