"""The typed requests every face builds and the service runs: a training plan (``TrainingRequest``,
``gpu-planner estimate``), one inference batch (``InferenceRequest``, ``estimate --mode
inference``), a serving deployment (``ServeRequest``, ``gpu-planner serve``) and its SLO search
(``ServeSearchRequest``), a plan search (``SearchRequest``) and a scaling curve (``ScalingRequest``).

Each is a frozen dataclass of options (core/options.py) and of parts whose fields are options too:
the engine's own parts (``TrainingSetup``, ``ParallelPlan``, ``InferenceSetup``) and the parts
declared here for what names a machine, prices a plan, overrides the speed model or sizes the host
side. ``options.build(TrainingRequest, {...})`` is the one way from option values to a request;
``options.given(request)`` the way back. Requests name things (a preset, a GPU, an instance); the
service resolves the names against the spec database (service/resolve.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from planner_app.core.hardware.fit import DEFAULT_MIN_HEADROOM_FRACTION
from planner_app.core.inference.setup import InferenceSetup
from planner_app.core.options import (
    MAX_GPUS,
    OPTION,
    Option,
    check_fields,
    declare,
    options_of,
    part,
)
from planner_app.core.plans.cost import PRICE_KINDS
from planner_app.core.serving.engine import (
    ENGINE_NAMES,
    GPU_MEMORY_UTILIZATION,
    SERVE_KV_DTYPES,
    SERVE_WEIGHT_DTYPES,
)
from planner_app.core.text import QT_TRANSLATE_NOOP
from planner_app.core.training.checkpoint import DEFAULT_INTERVAL_S, DEFAULT_KEPT
from planner_app.core.training.setup import ParallelPlan, TrainingSetup

# ---- options several requests share (one declaration each) -----------------------------------
MODEL = Option("model", QT_TRANSLATE_NOOP("Options", "preset name (gpu-planner models) or a config.json path"),
               QT_TRANSLATE_NOOP("Options", "Model"))
CALIBRATION = Option("text", QT_TRANSLATE_NOOP("Options", "name of a probe calibration profile (gpu-planner probe "
                                                          "--save NAME)"),
                     QT_TRANSLATE_NOOP("Options", "Calibration"), scope="scenario")
PRICE = Option("choice", QT_TRANSLATE_NOOP("Options", "price basis of cost.usd (default on_demand, else the first known "
                                                      "price)"),
               QT_TRANSLATE_NOOP("Options", "Price basis"), choices=PRICE_KINDS, scope="scenario", auto=True)
CNY_PER_USD = Option("float", QT_TRANSLATE_NOOP("Options", "exchange rate for CNY prices (default 7.10)"),
                     QT_TRANSLATE_NOOP("Options", "CNY per USD"), minimum=0.0, maximum=1e4, above_minimum=True,
                     scope="scenario", auto=True)
GPU = Option("text", QT_TRANSLATE_NOOP("Options", "GPU name or id (gpu-planner specs gpus)"),
             QT_TRANSLATE_NOOP("Options", "GPU"), scope="plan")
INSTANCE = Option("text", QT_TRANSLATE_NOOP("Options", "cloud instance id (gpu-planner specs instances)"),
                  QT_TRANSLATE_NOOP("Options", "Instance"), scope="plan")


def required(option: Option):
    """A field without a default: the request cannot be built without it."""
    return field(metadata={OPTION: option})


# ---- parts ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Machine:
    """Where a training plan runs, by name: a GPU or an instance, how many, and the links."""

    gpu: str | None = declare(None, GPU)
    instance: str | None = declare(None, INSTANCE)
    gpus: int = declare(0, Option(
        "int", QT_TRANSLATE_NOOP("Options", "total GPUs (default tp*pp*cp*ep*dp)"), QT_TRANSLATE_NOOP("Options", "GPUs"),
        minimum=1, maximum=MAX_GPUS, scope="plan", group="machine", auto=True))
    gpus_per_node: int = declare(0, Option(
        "int", QT_TRANSLATE_NOOP("Options", "GPUs in one node (default: the instance's, else 8)"),
        QT_TRANSLATE_NOOP("Options", "GPUs per node"), minimum=1, maximum=1024, scope="plan", group="machine",
        auto=True))
    fabric: str | None = declare(None, Option(
        "text", QT_TRANSLATE_NOOP("Options", "inter-node network id (gpu-planner specs fabrics; default: the "
                                             "instance's, else InfiniBand NDR)"),
        QT_TRANSLATE_NOOP("Options", "Network"), scope="plan", group="network", auto=True))
    nics_per_node: int = declare(0, Option(
        "int", QT_TRANSLATE_NOOP("Options", "network adapters per node (default: the instance's, else one per GPU)"),
        QT_TRANSLATE_NOOP("Options", "NICs per node"), minimum=1, maximum=1024, scope="plan", group="network",
        auto=True))

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class Pricing:
    """Which price a cost is at, and in which currency's rate."""

    price: str | None = declare(None, PRICE)
    price_mix: str | None = declare(None, Option(
        "text", QT_TRANSLATE_NOOP("Options", "e.g. reserved_1yr=0.8,on_demand=0.2"),
        QT_TRANSLATE_NOOP("Options", "Price mix"), scope="scenario"))
    cny_per_usd: float | None = declare(None, CNY_PER_USD)

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class SpeedOverrides:
    """A measured speed in place of the engine's efficiency model (the training step time only).
    Floors: 0.1% MFU and 1 GFLOP/s are below any GPU run (smaller values gave an infinite step); the
    GPU's peak bounds achieved_tflops in the service (service/results.py)."""

    mfu: float | None = declare(None, Option(
        "float", QT_TRANSLATE_NOOP("Options", "override the efficiency model with this MFU"),
        QT_TRANSLATE_NOOP("Options", "MFU"), minimum=0.001, maximum=1.0, scope="plan", group="speed"))
    achieved_tflops: float | None = declare(None, Option(
        "float", QT_TRANSLATE_NOOP("Options", "override: achieved TFLOP/s per GPU"),
        QT_TRANSLATE_NOOP("Options", "Achieved TFLOP/s"), minimum=0.001, maximum=1e6, unit="TFLOP/s", scope="plan",
        group="speed"))

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class HostOptions:
    """The host side of a training plan (issue 19): checkpoints and the storage they go to."""

    checkpoint_interval_min: float = declare(DEFAULT_INTERVAL_S / 60, Option(
        "float", QT_TRANSLATE_NOOP("Options", "minutes between checkpoint saves (default 60)"),
        QT_TRANSLATE_NOOP("Options", "Checkpoint interval"), minimum=0.0, maximum=1e6, above_minimum=True, unit="min",
        scope="plan", group="host"))
    checkpoints_kept: int = declare(DEFAULT_KEPT, Option(
        "int", QT_TRANSLATE_NOOP("Options", "checkpoints kept on disk (default 3)"),
        QT_TRANSLATE_NOOP("Options", "Checkpoints kept"), minimum=1, maximum=100000, scope="plan", group="host"))
    storage_write_gb_s: float | None = declare(None, Option(
        "float", QT_TRANSLATE_NOOP("Options", "checkpoint write bandwidth of one node in GB/s (default: the host "
                                              "probe's, else 1)"),
        QT_TRANSLATE_NOOP("Options", "Storage write bandwidth"), minimum=0.0, maximum=1e6, above_minimum=True,
        unit="GB/s", scope="plan", group="host", auto=True))
    host_probe: str | None = declare(None, Option(
        "text", QT_TRANSLATE_NOOP("Options", "a host probe result (JSON file of gpu-planner host-probe) that "
                                             "calibrates storage and decode rates"),
        QT_TRANSLATE_NOOP("Options", "Host probe"), scope="scenario", group="host"))

    def __post_init__(self):
        check_fields(self)


# ---- requests --------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainingRequest:
    """One training plan: the model, where it runs, its setup and layout (``gpu-planner estimate``)."""

    model: object = required(MODEL)
    machine: Machine = part(Machine)
    setup: TrainingSetup = part(TrainingSetup)
    layout: ParallelPlan = part(ParallelPlan)
    speed: SpeedOverrides = part(SpeedOverrides)
    pricing: Pricing = part(Pricing)
    host: HostOptions = part(HostOptions)
    calibration: str | None = declare(None, CALIBRATION)

    mode = "training"


@dataclass(frozen=True)
class InferenceMachine:
    """Where one inference batch runs: a GPU or an instance (its tp GPUs share one node)."""

    gpu: str | None = declare(None, GPU)
    instance: str | None = declare(None, INSTANCE)

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class InferencePricing:
    price: str | None = declare(None, PRICE)
    cny_per_usd: float | None = declare(None, CNY_PER_USD)

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class InferenceRequest:
    """One batch through Hugging Face transformers (``gpu-planner estimate --mode inference``)."""

    model: object = required(MODEL)
    machine: InferenceMachine = part(InferenceMachine)
    setup: InferenceSetup = part(InferenceSetup)
    pricing: InferencePricing = part(InferencePricing)
    calibration: str | None = declare(None, CALIBRATION)

    mode = "inference"


ESTIMATE_REQUESTS = {"training": TrainingRequest, "inference": InferenceRequest}
# Which request an estimate is (the CLI's --mode, a scenario workload's "mode"): not a field of one
MODE = Option("choice", QT_TRANSLATE_NOOP("Options", "training, or one inference batch (serving under load: "
                                                     "gpu-planner serve)"),
              QT_TRANSLATE_NOOP("Options", "Mode"), key="mode", default="training", choices=tuple(ESTIMATE_REQUESTS))


@dataclass(frozen=True)
class ServeRequest:
    """A continuous-batching server at steady state (``gpu-planner serve``); defaults are vLLM's
    (core/serving/engine.py names their sources). Unset max_num_seqs / max_num_batched_tokens take
    vLLM's default for the GPU's size."""

    model: object = required(MODEL)
    isl: int = required(Option("int", QT_TRANSLATE_NOOP("Options", "input (prompt) tokens per request"),
                               QT_TRANSLATE_NOOP("Options", "Input tokens"), minimum=1, maximum=1 << 24, scope="serve",
                               group="traffic"))
    osl: int = required(Option("int", QT_TRANSLATE_NOOP("Options", "output tokens per request"),
                               QT_TRANSLATE_NOOP("Options", "Output tokens"), minimum=1, maximum=1 << 24, scope="serve",
                               group="traffic"))
    gpu: str | None = declare(None, Option(
        "text", QT_TRANSLATE_NOOP("Options", "GPU name or id; a comma-separated list with --ttft-ms/--tpot-ms "
                                             "(search)"),
        QT_TRANSLATE_NOOP("Options", "GPU"), scope="serve", group="machine"))
    instance: str | None = declare(None, Option(
        "text", QT_TRANSLATE_NOOP("Options", "cloud instance id; a comma-separated list with --ttft-ms/--tpot-ms "
                                             "(search)"),
        QT_TRANSLATE_NOOP("Options", "Instance"), scope="serve", group="machine"))
    tp: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "tensor-parallel degree of one replica"),
        QT_TRANSLATE_NOOP("Options", "Tensor parallel"), minimum=1, maximum=1024, scope="serve", group="deployment"))
    pp: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "pipeline-parallel degree of one replica"),
        QT_TRANSLATE_NOOP("Options", "Pipeline parallel"), minimum=1, maximum=1024, scope="serve", group="deployment"))
    ep: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "expert-parallel degree (MoE models; divides tp x attention-dp)"),
        QT_TRANSLATE_NOOP("Options", "Expert parallel"), minimum=1, maximum=1024, scope="serve", group="deployment"))
    attention_dp: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "data-parallel attention ranks in one replica"),
        QT_TRANSLATE_NOOP("Options", "Attention data parallel"), minimum=1, maximum=1024, scope="serve",
        group="deployment"))
    replicas: int = declare(1, Option(
        "int", QT_TRANSLATE_NOOP("Options", "independent replicas behind a load balancer"),
        QT_TRANSLATE_NOOP("Options", "Replicas"), minimum=1, maximum=1 << 16, scope="serve", group="deployment"))
    concurrency: int | None = declare(None, Option(
        "int", QT_TRANSLATE_NOOP("Options", "requests in the system at once (closed loop)"),
        QT_TRANSLATE_NOOP("Options", "Concurrency"), minimum=1, maximum=1 << 30, scope="serve", group="traffic"))
    request_rate: float | None = declare(None, Option(
        "float", QT_TRANSLATE_NOOP("Options", "arriving requests per second (open loop)"),
        QT_TRANSLATE_NOOP("Options", "Request rate"), minimum=0.0, maximum=1e9, above_minimum=True, unit="req/s",
        scope="serve", group="traffic"))
    weights_dtype: str = declare("bf16", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "weight precision"), QT_TRANSLATE_NOOP("Options", "Weights"),
        choices=SERVE_WEIGHT_DTYPES, scope="serve", group="deployment"))
    kv_dtype: str = declare("bf16", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "KV-cache precision"), QT_TRANSLATE_NOOP("Options", "KV cache"),
        choices=SERVE_KV_DTYPES, scope="serve", group="deployment"))
    engine: str = declare("vllm", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "serving engine (its per-step overhead)"),
        QT_TRANSLATE_NOOP("Options", "Engine"), choices=ENGINE_NAMES, scope="serve", group="engine"))
    gpu_memory_utilization: float = declare(GPU_MEMORY_UTILIZATION, Option(
        "float", QT_TRANSLATE_NOOP("Options", "share of GPU memory the engine may use (vLLM's default 0.9); with "
                                              "trtllm, the share of the memory the model leaves free that the KV "
                                              "cache takes (free_gpu_memory_fraction)"),
        QT_TRANSLATE_NOOP("Options", "GPU memory utilization"), minimum=0.0, maximum=1.0, above_minimum=True,
        scope="serve", group="engine"))
    max_num_seqs: int | None = declare(None, Option(
        "int", QT_TRANSLATE_NOOP("Options", "most requests running at once per engine (default vLLM's: 1024 on GPUs "
                                            "of 70 GiB or more except A100, else 256)"),
        QT_TRANSLATE_NOOP("Options", "Max running requests"), minimum=1, maximum=1 << 20, scope="serve",
        group="engine", auto=True))
    max_num_batched_tokens: int | None = declare(None, Option(
        "int", QT_TRANSLATE_NOOP("Options", "token budget of one engine step, chunked prefill (default vLLM's: 8192 on "
                                            "GPUs of 70 GiB or more except A100, else 2048)"),
        QT_TRANSLATE_NOOP("Options", "Max tokens per step"), minimum=1, maximum=1 << 24, scope="serve", group="engine",
        auto=True))
    benchmark_requests: int | None = declare(None, Option(
        "int", QT_TRANSLATE_NOOP("Options", "requests a closed-loop benchmark at --concurrency sends in all, its "
                                            "clients starting together (default: concurrency x 10)"),
        QT_TRANSLATE_NOOP("Options", "Benchmark requests"), minimum=1, maximum=1 << 30, scope="serve",
        group="traffic", auto=True, requires=("concurrency", None)))
    price: str | None = declare(None, PRICE)
    cny_per_usd: float | None = declare(None, CNY_PER_USD)
    calibration: str | None = declare(None, CALIBRATION)

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class SloTargets:
    """Latency targets of a serving search (and of a scenario's serve section)."""

    ttft_ms: float | None = declare(None, Option(
        "float", QT_TRANSLATE_NOOP("Options", "search: time-to-first-token target"),
        QT_TRANSLATE_NOOP("Options", "TTFT target"), minimum=0.0, maximum=1e9, above_minimum=True, unit="ms",
        scope="serve", group="targets"))
    tpot_ms: float | None = declare(None, Option(
        "float", QT_TRANSLATE_NOOP("Options", "search: time-per-output-token target"),
        QT_TRANSLATE_NOOP("Options", "TPOT target"), minimum=0.0, maximum=1e9, above_minimum=True, unit="ms",
        scope="serve", group="targets"))

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class ServeSearchRequest:
    """The deployments of ``serve``'s model and traffic on each machine of ``serve.gpu`` or
    ``serve.instance`` (comma-separated) that meet the targets (``serve --ttft-ms --tpot-ms``)."""

    serve: ServeRequest = part(ServeRequest, required=True)
    targets: SloTargets = part(SloTargets)
    quantized_weights: bool = declare(False, Option(
        "bool", QT_TRANSLATE_NOOP("Options", "search: also try quantized weights (fp8, int4; fp4 where the GPU has "
                                             "fp4 tensor cores); without it, only the model's own 16-bit weights"),
        QT_TRANSLATE_NOOP("Options", "Quantized weights"), scope="serve", group="search"))
    top: int = declare(10, Option("int", QT_TRANSLATE_NOOP("Options", "search: deployments to list"),
                                  QT_TRANSLATE_NOOP("Options", "Top"), minimum=1, maximum=10000, scope="command"))


@dataclass(frozen=True)
class SearchLimits:
    """What a plan search may use and how it ranks (``gpu-planner search``)."""

    max_gpus: int = declare(0, Option(
        "int", QT_TRANSLATE_NOOP("Options", "largest GPU count to consider"), QT_TRANSLATE_NOOP("Options", "Max GPUs"),
        minimum=1, maximum=MAX_GPUS, scope="command", auto=True))  # 0: not given (the search needs it)
    deadline_days: float | None = declare(None, Option(
        "float", QT_TRANSLATE_NOOP("Options", "only plans that finish within this many days"),
        QT_TRANSLATE_NOOP("Options", "Deadline"), minimum=0.0, maximum=1e6, above_minimum=True, unit="days",
        scope="command"))
    budget_usd: float | None = declare(None, Option(
        "float", QT_TRANSLATE_NOOP("Options", "only plans that cost at most this much (USD at the price basis)"),
        QT_TRANSLATE_NOOP("Options", "Budget"), minimum=0.0, maximum=1e15, above_minimum=True, unit="USD",
        scope="command"))
    objective: str = declare("time", Option(
        "choice", QT_TRANSLATE_NOOP("Options", "rank by time to train or by cost"),
        QT_TRANSLATE_NOOP("Options", "Objective"), choices=("time", "cost"), scope="command"))
    top: int = declare(10, Option("int", QT_TRANSLATE_NOOP("Options", "how many plans to print"),
                                  QT_TRANSLATE_NOOP("Options", "Top"), minimum=1, maximum=MAX_GPUS, scope="command"))
    min_headroom_pct: float = declare(DEFAULT_MIN_HEADROOM_FRACTION * 100, Option(
        "float", QT_TRANSLATE_NOOP("Options", "memory margin: a plan fits only with this % of the GPU free"),
        QT_TRANSLATE_NOOP("Options", "Memory margin"), minimum=0.0, maximum=99.0, unit="%", scope="command"))

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class SearchRequest:
    """Every layout of a model on a list of GPUs or instances, ranked (``gpu-planner search``);
    ``gpu`` and ``instance`` hold comma-separated lists."""

    model: object = required(MODEL)
    gpu: str | None = declare(None, Option(
        "text", QT_TRANSLATE_NOOP("Options", "one or more GPUs, comma-separated"), QT_TRANSLATE_NOOP("Options", "GPU"),
        scope="command"))
    instance: str | None = declare(None, Option(
        "text", QT_TRANSLATE_NOOP("Options", "one or more instances, comma-separated"),
        QT_TRANSLATE_NOOP("Options", "Instance"), scope="command"))
    setup: TrainingSetup = part(TrainingSetup)
    limits: SearchLimits = part(SearchLimits)
    fabric: str | None = declare(None, Option(
        "text", QT_TRANSLATE_NOOP("Options", "inter-node network id (gpu-planner specs fabrics; default: the "
                                             "instance's, else InfiniBand NDR)"),
        QT_TRANSLATE_NOOP("Options", "Network"), scope="command", auto=True))
    price: str | None = declare(None, Option(
        "choice", QT_TRANSLATE_NOOP("Options", "price basis for every plan's cost (as Plan's headline cost)"),
        QT_TRANSLATE_NOOP("Options", "Price basis"), choices=PRICE_KINDS, scope="command", auto=True))
    cny_per_usd: float | None = declare(None, CNY_PER_USD)
    calibration: str | None = declare(None, CALIBRATION)

    @property
    def machines(self) -> tuple[tuple[str, str], ...]:
        """(kind, name) of each machine: the instances, then the GPUs."""
        return tuple(("instance", x.strip()) for x in (self.instance or "").split(",") if x.strip()) + tuple(
            ("gpu", x.strip()) for x in (self.gpu or "").split(",") if x.strip())


DEFAULT_NODES = "1,2,4,8,16,32,64"
MAX_NODES = 1 << 17  # x 8 GPUs: the largest GPU count an option allows (MAX_GPUS = 2^20)


@dataclass(frozen=True)
class ScalingCurves:
    """Which scaling curves of a training plan to draw (``gpu-planner scaling``)."""

    nodes: str = declare(DEFAULT_NODES, Option(
        "text", QT_TRANSLATE_NOOP("Options", "node counts, comma-separated"), QT_TRANSLATE_NOOP("Options", "Node counts"),
        scope="command"))
    fabrics: str | None = declare(None, Option(
        "text", QT_TRANSLATE_NOOP("Options", "fabric ids to compare, comma-separated (default: the plan's own)"),
        QT_TRANSLATE_NOOP("Options", "Networks"), scope="command", auto=True))
    weak: bool = declare(False, Option(
        "bool", QT_TRANSLATE_NOOP("Options", "weak scaling: global batch grows with the nodes"),
        QT_TRANSLATE_NOOP("Options", "Weak scaling"), scope="command"))

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class ScalingRequest:
    """A training plan's throughput and efficiency against node count, one curve per network."""

    plan: TrainingRequest = part(TrainingRequest, required=True)
    curves: ScalingCurves = part(ScalingCurves)


def serve_section_options() -> dict:
    """The options a scenario's ``serve`` section holds (scope "serve"): the serve request's
    deployment, traffic and engine, and the search's targets; the model, prices and calibration are
    the scenario's own."""
    return {k: o for k, o in options_of(ServeSearchRequest).items() if o.scope == "serve"}
