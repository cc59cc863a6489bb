"""The cluster probe: the launch command and Slurm script, the gloo run of the very
command the app writes (several local processes), the result import, verdicts against
the expected link rate, and the calibration that replaces the engine's fabric numbers."""
import json
import os
import shlex
import subprocess
import sys

import pytest

from planner_app import cli
from planner_app.core.hardware.collectives import bus_factor
from planner_app.probe import cluster
from planner_app.specdb.catalog import shipped_db
from planner_app.specdb.schema import SpecDataError

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
H200X2 = os.path.join(ROOT, "tests", "data", "collectives_h200x2.json")



def _h200x2():
    with open(H200X2) as f:
        return json.load(f)


def _gloo_run(tmp_path, ranks=3):
    out = tmp_path / "gloo.json"
    line = cluster.torchrun_command(1, ranks, str(out), python=sys.executable)
    line += " --backend gloo --min-bytes 1024 --max-bytes 65536 --factor 8 --iters 3 --warmup 1 --p2p-bytes 16384 --p2p-iters 2"
    env = dict(os.environ, PYTHONPATH=os.path.abspath(ROOT), OMP_NUM_THREADS="1")
    words = shlex.split(line)
    assignments = [w for w in words if "=" in w and w.split("=")[0].isupper()]
    for a in assignments:
        k, v = a.split("=", 1)
        env[k] = v
    cmd = words[len(assignments):]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    return out, r


@pytest.fixture(scope="module")
def gloo_result(tmp_path_factory):
    pytest.importorskip("torch", reason="the gloo collective test needs torch (.ci/run installs it)")
    return _gloo_run(tmp_path_factory.mktemp("gloo"))


def test_the_written_command_runs_three_gloo_ranks_and_measures_every_collective(gloo_result):
    out, r = gloo_result
    data = cluster.read_result(str(out))
    env = data["environment"]
    assert env["backend"] == "gloo" and env["world_size"] == 3 and env["nodes"] == 1
    assert data["all_reduce_correct"] is True
    names = {row["collective"] for row in data["rows"]}
    assert names == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}
    sizes = sorted({row["bytes"] for row in data["rows"] if row["collective"] == "all_reduce"})
    assert len(sizes) == 3 and sizes[0] <= 1024 and sizes[-1] <= 65536
    for row in data["rows"]:
        assert row["time_us"] > 0 and row["time_us_max"] >= row["time_us"] * 0.999
        assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * bus_factor(row["collective"], 3))
        assert row["algbw_gbps"] == pytest.approx(row["bytes"] / (row["time_us"] * 1e-6) / 1e9)
    m = data["p2p_gbps"]
    assert len(m) == 3 and all(m[i][i] is None for i in range(3))
    assert all(m[i][j] > 0 for i in range(3) for j in range(3) if i != j)
    assert '"type": "result"' in r.stdout


def test_gloo_result_imports_into_a_profile(gloo_result, capsys):
    out, _ = gloo_result
    assert cli.main(["cluster", "import", str(out), "--profile", "cpu-gloo", "--gpu", "h100-sxm", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["profile"] == "cpu-gloo"
    assert set(shown["summary"]["largest"]) == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}
    # CPU gloo is far below NVLink: the verdict says so
    assert shown["verdicts"][0]["status"] == "low" and shown["verdicts"][0]["fraction"] < 0.5


def test_command_and_slurm_script_text():
    one = cluster.torchrun_command(1, 8, "r.json")
    assert "--standalone" in one and "--nproc-per-node=8" in one and "NCCL_NVLS_ENABLE=0" in one
    assert "-m planner_app.probe.collectives --out r.json" in one
    multi = cluster.torchrun_command(4, 8, "out dir/r.json", master_addr="node1", port=29400)
    assert "--nnodes=4" in multi and "--rdzv-endpoint=node1:29400" in multi and "--standalone" not in multi
    assert "'out dir/r.json'" in multi  # quoted for the shell
    s = cluster.slurm_script(2, 4, "r.json", partition="gpu", account="ml", setup="module load cuda")
    lines = s.splitlines()
    assert lines[0] == "#!/bin/bash"
    for want in ("#SBATCH --nodes=2", "#SBATCH --gpus-per-node=4", "#SBATCH --partition=gpu", "#SBATCH --account=ml",
                 "module load cuda", "export NCCL_NVLS_ENABLE=0"):
        assert want in lines
    srun = [x for x in lines if x.startswith("srun ")][0]
    assert "--nnodes=$SLURM_NNODES" in srun and "--nproc-per-node=4" in srun
    assert "--rdzv-endpoint=$MASTER_ADDR:29500" in srun
    with pytest.raises(Exception, match="at least 1"):
        cluster.torchrun_command(0, 8, "r.json")


def test_slurm_script_written_atomically(tmp_path, capsys):
    path = tmp_path / "probe.sbatch"
    assert cli.main(["cluster", "slurm", "--nodes", "2", "-o", str(path)]) == 0
    assert path.read_text().startswith("#!/bin/bash") and "sbatch" in capsys.readouterr().err
    assert cli.main(["cluster", "slurm", "--nodes", "0"]) == 2


def test_h200_pair_measured_bus_bandwidth_against_nvlink():
    data = cluster.read_result(H200X2)
    db = shipped_db()
    gpu = db.gpu("h200")
    v = cluster.collective_verdicts(data, gpu, cluster.default_intra_fabric(db, gpu), db.fabric("ib-ndr"))
    assert len(v) == 1 and v[0]["status"] == "normal"
    # NVLink 4 per direction 450 GB/s x the fabric's efficiency: the 2-GPU measurement reaches it
    assert v[0]["expected_gbps"] == pytest.approx(450 * db.fabric("nvlink4").efficiency)
    assert 0.9 < v[0]["fraction"] < 1.1


def test_bad_result_files_name_the_problem(tmp_path):
    p = tmp_path / "r.json"
    p.write_text("{not json")
    with pytest.raises(SpecDataError, match="not valid JSON"):
        cluster.read_result(str(p))
    p.write_text(json.dumps({"schema": "other"}))
    with pytest.raises(SpecDataError, match="is not a result"):
        cluster.read_result(str(p))
    data = _h200x2()
    data["rows"][3]["busbw_gbps"] *= 2
    p.write_text(json.dumps(data))
    with pytest.raises(SpecDataError, match=r"rows\[3\].busbw_gbps"):
        cluster.read_result(str(p))
    with pytest.raises(SpecDataError, match="cannot be read"):
        cluster.read_result(str(tmp_path / "missing.json"))


def test_imported_bandwidth_replaces_the_fabric_assumption(tmp_path):
    """A profile with a slow measured intra-node all-reduce makes data-parallel steps slower."""
    from accuracy.inputs import run_inputs
    from planner_app.core.plans.cost import DEFAULT_MIX, PriceChoice
    from planner_app.core.requests import SpeedOverrides
    from planner_app.core.training.estimate import estimate_training
    from planner_app.service.calibration import load_calibration
    from planner_app.service.resolve import resolve_hardware, resolve_model
    from planner_app.specdb.userdb import UserDB

    udb = UserDB(str(tmp_path / "user.sqlite"))
    fast = _h200x2()
    slow = _h200x2()
    for r in slow["rows"]:
        r["algbw_gbps"] /= 10
        r["busbw_gbps"] /= 10
    sdb = shipped_db()
    cluster.attach_to_profile(udb, "slow", slow, sdb.gpu("h200"))
    cluster.attach_to_profile(udb, "fast", fast, sdb.gpu("h200"))
    model = resolve_model("llama-2-7b", sdb)
    setup, plan = run_inputs(seq_len=4096, recipe="amp-bf16", dp=8, zero=1)
    times = {}
    for name, data in (("fast", fast), ("slow", slow)):
        cal = load_calibration(name, sdb, userdb=udb)
        assert cal.intra_busbw_gb_s == pytest.approx(cluster.best_busbw(data))
        assert cal.device == "NVIDIA H200"
        hw, _, _ = resolve_hardware(sdb, gpu="h200", calibration=cal)
        est = estimate_training(model, hw, setup, plan, SpeedOverrides(), PriceChoice(None, DEFAULT_MIX, None))
        times[name] = est.time.step_s
    assert times["slow"] > times["fast"] * 1.01


def test_multi_node_bus_bandwidth_becomes_the_per_gpu_network_share():
    from planner_app.core.hardware.network import topology
    db = shipped_db()
    gpu = db.gpu("h100-sxm")
    t = topology(gpu, db.fabric("nvlink4"), db.fabric("ib-ndr"), 8, 8, inter_override_gb_s=320.0)
    assert t.inter_gb_s == pytest.approx(40.0)
    data = {"environment": {"nodes": 2, "world_size": 16, "local_world_size": 8},
            "rows": [{"collective": "all_reduce", "busbw_gbps": 300.0}]}
    v = cluster.collective_verdicts(data, gpu, db.fabric("nvlink4"), db.fabric("ib-ndr"), 8)
    assert v[0]["expected_gbps"] == pytest.approx(8 * 50 * db.fabric("ib-ndr").efficiency)
    assert v[0]["status"] == "low"


def test_validation_training_loop_runs_the_built_in_gpt_on_cpu():
    """The real-run validation's training loop (used on the GPU machine) on a tiny GPT on CPU:
    the model it builds has the parameter count the engine computes, and the loss falls."""
    torch = pytest.importorskip("torch")
    from planner_app.core.models.hf_config import model_from_hf_config
    from planner_app.probe.validate import build_tiny_gpt, train_steps

    cfg = {"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 128, "vocab_size": 256,
           "n_inner": None, "tie_word_embeddings": True}
    torch.manual_seed(0)
    model, vocab = build_tiny_gpt(torch, cfg, "fp32", "cpu")
    assert sum(p.numel() for p in model.parameters()) == model_from_hf_config(cfg, "tiny").params_total
    res = train_steps(torch, model, vocab, "fp32", micro_batch=2, seq_len=32, optimizer="adamw", recompute="none",
                      steps=4, device="cpu")
    losses = [s["loss"] for s in res["steps"]]
    assert len(losses) == 4 and all(x == x for x in losses) and losses[-1] < losses[0]


def test_the_launch_path_ran_on_the_gpu_machine(capsys):
    """The command the app writes, run on the single-H200 machine (NCCL, one rank): the
    result imports; one rank gives no bus bandwidth verdict rather than a false "low"."""
    path = os.path.join(ROOT, "tests", "data", "collectives_h200x1_launch.json")
    data = cluster.read_result(path)
    env = data["environment"]
    assert env["backend"] == "nccl" and env["world_size"] == 1 and env["devices"] == ["NVIDIA H200"]
    assert {r["collective"] for r in data["rows"]} == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}
    db = shipped_db()
    gpu = db.gpu(env["devices"][0])
    assert cluster.collective_verdicts(data, gpu, cluster.default_intra_fabric(db, gpu), db.fabric("ib-ndr")) == []
    assert cli.main(["cluster", "import", path]) == 0
    assert "needs two or more GPUs" in capsys.readouterr().out
