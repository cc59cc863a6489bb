"""Generated shell text runs no injected command: the Slurm script and the torchrun line are
written with hostile values and RUN with stub srun/scontrol/python on PATH; no marker file
may appear, and the values reach the program as single, unchanged arguments."""
import os
import stat
import subprocess

import pytest

from planner_app.core.errors import InputError
from planner_app.probe import cluster


def _stub(path, body):
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def sandbox(tmp_path):
    """A bin folder of stubs (srun runs its arguments, scontrol prints a host, the 'python'
    records its argv one per line), a marks folder hostile values try to write into."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    argv_file = tmp_path / "argv.txt"
    _stub(bin_dir / "srun", 'exec "$@"')
    _stub(bin_dir / "scontrol", "echo node1")
    _stub(bin_dir / "torchrun", 'echo torchrun "$@"')
    # the recording python lives in a folder whose name is itself hostile (relative to the
    # working folder: a name holds no "/")
    odd = tmp_path / "py $(touch injected-dir) ; touch injected-dir2"
    odd.mkdir()
    py = odd / "python"
    _stub(py, f'for a in "$0" "$@"; do printf "%s\\n" "$a"; done > {argv_file}')
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", SLURM_JOB_NODELIST="node[1-2]",
               SLURM_NNODES="2", SLURM_JOB_ID="7")
    return {"marks": marks, "argv": argv_file, "python": str(py), "env": env, "dir": tmp_path}


HOSTILE_OUT = ["r; touch {m}/out1.json", "$(touch {m}/out2)", "`touch {m}/out3`", "a'b\"c $HOME {m}/x"]


@pytest.mark.parametrize("out", HOSTILE_OUT)
def test_slurm_script_runs_no_injected_command(sandbox, out, cli):
    m = sandbox["marks"]
    out = out.format(m=m)
    script = sandbox["dir"] / "probe.sbatch"
    rc, _, err = cli(["cluster", "slurm", "--nodes", "2", "--gpus-per-node", "4", "--out", out,
                      "--python", sandbox["python"], "--partition", "gpu,debug", "--account", "ml-team",
                      "-o", str(script)])
    assert rc == 0, err
    r = subprocess.run(["bash", str(script)], env=sandbox["env"], capture_output=True, text=True,
                       cwd=sandbox["dir"], timeout=30)
    assert r.returncode == 0, r.stderr
    assert os.listdir(m) == []  # nothing the values said was run
    assert not [f for f in os.listdir(sandbox["dir"]) if f.startswith("injected")]
    argv = sandbox["argv"].read_text().splitlines()
    assert argv[0] == sandbox["python"]  # the hostile path is one word, run as itself
    assert argv[argv.index("--out") + 1] == out  # the hostile file name arrives unchanged
    assert "--rdzv-endpoint=node1:29500" in argv  # MASTER_ADDR from scontrol still expands


@pytest.mark.parametrize("out", HOSTILE_OUT)
def test_torchrun_command_runs_no_injected_command(sandbox, out, cli):
    m = sandbox["marks"]
    out = out.format(m=m)
    rc, line, err = cli(["cluster", "command", "--nodes", "2", "--out", out, "--python", sandbox["python"],
                         "--master-addr", "node1.example.org", "--port", "29400"])
    assert rc == 0, err
    r = subprocess.run(["bash", "-c", line], env=sandbox["env"], capture_output=True, text=True,
                       cwd=sandbox["dir"], timeout=30)
    assert r.returncode == 0, r.stderr
    assert os.listdir(m) == []
    assert not [f for f in os.listdir(sandbox["dir"]) if f.startswith("injected")]
    argv = sandbox["argv"].read_text().splitlines()
    assert argv[argv.index("--out") + 1] == out
    assert "--rdzv-endpoint=node1.example.org:29400" in argv


def test_default_master_addr_expands_on_the_node(sandbox, cli):
    rc, line, _ = cli(["cluster", "command", "--nodes", "2", "--python", sandbox["python"]])
    assert rc == 0
    env = dict(sandbox["env"], MASTER_ADDR="10.0.0.5")
    subprocess.run(["bash", "-c", line], env=env, check=True, cwd=sandbox["dir"], timeout=30)
    assert "--rdzv-endpoint=10.0.0.5:29500" in sandbox["argv"].read_text().splitlines()


@pytest.mark.parametrize("option, value", [
    ("--partition", "gpu\ntouch {m}/p"), ("--partition", "gpu; touch {m}/p"), ("--account", "a\rtouch {m}/a"),
    ("--account", "$(touch {m}/a)"), ("--time", "00:10:00\ntouch {m}/t"), ("--time", "1 hour"),
    ("--setup", "source env\ntouch {m}/s"), ("--python", "python\ntouch {m}/py"), ("--out", "r.json\n touch {m}/o"),
])
def test_values_that_would_add_a_shell_line_are_refused(sandbox, cli, option, value):
    m = sandbox["marks"]
    rc, out, err = cli(["cluster", "slurm", option, value.format(m=m)])
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and option in err, err
    assert os.listdir(m) == []


@pytest.mark.parametrize("kw, field", [({"partition": "a\nb"}, "partition"), ({"account": "x y"}, "account"),
                                       ({"time_limit": "\x1b[2J"}, "time"), ({"setup": "a\x00b"}, "setup")])
def test_slurm_script_errors_name_the_field(kw, field):
    with pytest.raises(InputError) as e:
        cluster.slurm_script(1, 8, "r.json", **kw)
    assert e.value.field == field


@pytest.mark.parametrize("argv, flag", [
    (["cluster", "command", "--port", "70000"], "--port"), (["cluster", "command", "--port", "0"], "--port"),
    (["cluster", "command", "--nodes", "2", "--master-addr", "h;touch x"], "--master-addr"),
    (["cluster", "command", "--nodes", "2", "--master-addr", "$(id)"], "--master-addr"),
])
def test_command_options_are_checked(cli, argv, flag):
    rc, out, err = cli(argv)
    assert rc == 2 and out == "" and flag in err and len(err.strip().splitlines()) == 1


def test_slurm_output_to_a_folder_is_one_line(tmp_path, cli):
    rc, _, err = cli(["cluster", "slurm", "-o", str(tmp_path)])
    assert rc == 2 and "--output" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not [p for p in os.listdir(tmp_path.parent) if p.startswith(".tmp-")]
