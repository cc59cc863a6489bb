"""The TTFT a closed-loop benchmark at a fixed concurrency reports (core/serving/benchmark.py, serve's
``benchmark``): its opening burst, its mean and median over the run, and the input it takes."""
import pytest
from serve_case import BASE, serve  # the shared request; db: tests/conftest.py

from planner_app.cli import main


def test_a_closed_loop_benchmark_sees_its_opening_burst(db):
    """c clients that start together queue behind each other's prefill once: the benchmark's mean TTFT sits
    between the steady state's and the burst's, by the share of requests in the first round; its median stays
    the steady state's while under half the requests are in that round."""
    one = serve(db, concurrency=1)
    assert one["benchmark"]["opening_burst_ttft_ms"] == pytest.approx(one["ttft_ms"], rel=0.25)
    out = serve(db, concurrency=64)
    b = out["benchmark"]
    assert b["requests"] == 640 and b["clients"] == 64  # the default run: 10 requests per client
    # the burst's 64 prompts of 2,048 tokens pass through 8,192-token steps: its mean TTFT is many prefills
    assert b["opening_burst_ttft_ms"] > 8 * one["benchmark"]["opening_burst_ttft_ms"]
    share = 64 / 640
    assert b["mean_ttft_ms"] == pytest.approx(out["ttft_ms"] + share * (b["opening_burst_ttft_ms"] - out["ttft_ms"]))
    assert b["median_ttft_ms"] == pytest.approx(out["ttft_ms"])
    short = serve(db, concurrency=64, benchmark_requests=64)  # one round: the burst alone
    assert short["benchmark"]["mean_ttft_ms"] == pytest.approx(b["opening_burst_ttft_ms"])
    # its prompts' TTFTs spread evenly from the first's to the last's: the median is their middle, the mean
    assert short["benchmark"]["median_ttft_ms"] == pytest.approx(b["opening_burst_ttft_ms"], rel=1e-6)
    mostly_burst = serve(db, concurrency=64, benchmark_requests=100)["benchmark"]
    assert out["ttft_ms"] < mostly_burst["median_ttft_ms"] < b["opening_burst_ttft_ms"]
    long = serve(db, concurrency=64, benchmark_requests=10**9)  # a long run: the steady state
    assert long["benchmark"]["mean_ttft_ms"] == pytest.approx(out["ttft_ms"], rel=1e-5)
    assert serve(db, concurrency=None, request_rate=2.0)["benchmark"] is None  # open loop: no burst


@pytest.mark.parametrize("kw", [{"benchmark_requests": 0}, {"benchmark_requests": 2.5},
                                {"concurrency": None, "request_rate": 1.0, "benchmark_requests": 100}])
def test_benchmark_requests_need_a_concurrency_and_a_whole_number(db, kw):
    from planner_app.core.errors import InputError
    with pytest.raises(InputError) as e:
        serve(db, **kw)
    assert e.value.field == "benchmark_requests"


def test_the_search_refuses_a_benchmark_length(capsys):
    rc = main(BASE + ["--ttft-ms", "1000", "--tpot-ms", "50", "--benchmark-requests", "80"])
    err = capsys.readouterr().err
    assert rc == 2 and "--benchmark-requests" in err
