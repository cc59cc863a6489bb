"""What a closed-loop benchmark at a fixed concurrency reports as TTFT (issue 15): its clients start together
on an idle server, so the first round's prompts queue behind each other's prefill, and its mean (and, once
that round is half the run or more, its median) carries that opening burst. The steady state itself is
core/serving/engine.py's; this module takes its ServeState and step time. Pure: numbers or columns in and out.
"""
from __future__ import annotations

import numpy as np

from planner_app.core.serving.engine import (
    Deployment,
    Device,
    ModelShape,
    ServeState,
    step_time_s,
)

# A closed-loop benchmark at concurrency c (aiperf --concurrency, vllm bench serve --max-concurrency) starts
# its c clients together on an idle server (aiperf drains its warm-up before the profiling phase and then
# issues one credit per client at once: aiperf/timing/credit_issuing_strategy.py; vLLM's benchmark_serving
# runs its warm-ups first too), so the first round's prompts queue behind each other's prefill; the TTFT it
# reports over N requests carries that opening burst in c / N of them. Run length N = concurrency x 10: NVIDIA's
# aiconfigurator / Dynamo deployment guide ("to reduce the impact of the first batch of requests",
# docs/dynamo_deployment_guide.md) and SemiAnalysis InferenceX's single-node scripts (--num-prompts
# $((CONC * 10)), benchmarks/single_node/*.sh).
BENCHMARK_REQUESTS_PER_CLIENT = 10


def _burst_steps(s: ModelShape, dev: Device, d: Deployment, clients, isl):
    """(steps the first prompt waits, steps the prompts wait on average, the time of one step) for
    ``clients`` prompts (one replica's) reaching an idle replica together: the engine prefills them first
    come, first served, a step's token budget at a time (decode-first: the prompts already prefilled decode in
    the later steps), and a prompt's first token comes at the end of the step that finishes it."""
    n = np.maximum(np.asarray(clients, dtype=float) / d.attention_dp, 1.0)  # per rank: ranks prefill side by side
    dec = (n - 1.0) / 2.0  # the prompts already prefilled decode in the later steps: on average half of them
    budget = np.maximum(d.max_batched_tokens - dec, 1.0)
    per_step = np.minimum(budget, n * isl)  # prompt tokens a step of the burst carries
    t_step = step_time_s(s, dev, d, dec, per_step, isl + 1.0, isl / 2.0)
    # the j-th prompt is done after ceil(j x isl / budget) steps; over j = 1..n that averages
    # isl / budget x (n + 1) / 2 plus half a step for the rounding, and never less than the first prompt's
    x = isl / budget
    first = np.ceil(x)
    return first, np.maximum(first, x * (n + 1.0) / 2.0 + 0.5), t_step


def benchmark_ttft_s(s: ModelShape, dev: Device, d: Deployment, st: ServeState, clients, requests, isl):
    """(mean, median, the first round's mean) TTFT a closed-loop benchmark of ``requests`` requests from
    ``clients`` clients reports: the opening burst's (``_burst_steps``, its prompts' TTFTs spread evenly from
    the first prompt's to the last's) in the first round, the steady state's in the others; the queue for a
    slot, where saturated, in all of them. While under half the requests are in the first round the median
    is the steady state's."""
    first_steps, mean_steps, t_step = _burst_steps(s, dev, d, st.running, isl)
    steady = st.ttft_s - st.queue_s
    f = np.clip(np.asarray(clients, dtype=float) / np.maximum(requests, 1), 0.0, 1.0)
    burst = mean_steps * t_step
    lo = first_steps * t_step
    hi = np.maximum(2.0 * burst - lo, lo)  # the burst's TTFTs, uniform on [lo, hi]
    mean = st.ttft_s + f * (burst - steady)
    span = np.maximum(hi - lo, 1e-12)

    def burst_quantile(q):
        return lo + np.clip(q / np.maximum(f, 1e-12), 0.0, 1.0) * span
    below = f * np.clip((steady - lo) / span, 0.0, 1.0)  # share of all requests faster than the steady state
    median = np.where(below >= 0.5, burst_quantile(0.5),
                      np.where(below + (1.0 - f) >= 0.5, steady, burst_quantile(0.5 - (1.0 - f))))
    return mean, median + st.queue_s, burst
