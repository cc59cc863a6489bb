"""Issue 29, item 11 in the CLI: `scaling --fabrics` prints each network's own NIC count and where it
comes from (it printed the plan's instance's 32 NICs for every network, also for 100 Gb/s TCP)."""
import contextlib
import io

from planner_app.cli import main


def test_each_network_header_has_its_own_nic_count():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["scaling", "--model", "llama-3.1-70b", "--instance", "p5.48xlarge", "--gpus", "64",
                     "--fabrics", "efa-v2,eth-100,ib-ndr"]) == 0
    heads = {line.split(":")[0]: line for line in out.getvalue().splitlines() if "scaling of" in line}
    assert "32 NICs per node: the plan's (p5.48xlarge)" in heads["efa-v2"]
    assert "1 NICs per node" in heads["eth-100"] and "spec data" in heads["eth-100"]
    assert "8 NICs per node" in heads["ib-ndr"]
