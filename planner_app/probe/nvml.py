"""NVML inventory and telemetry (``pynvml`` from the ``nvidia-ml-py`` distribution).

NVML is initialised once, lazily, and shut down at exit; a field the GPU does not support
is ``None``; no driver or no GPU is a state of its own (``NvmlState``), never an exception.
"""
from __future__ import annotations

import atexit
import threading
import time
from dataclasses import asdict, dataclass, field

from planner_app.core.text import QT_TRANSLATE_NOOP, Text

_LOCK = threading.RLock()
_STATE = None  # NvmlState once initialised


@dataclass
class NvmlState:
    available: bool
    message: str  # plain words for the user (a core.text.Text: the Probe page shows it translated)
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    nvml_version: str | None = None


def _plain_error(e) -> str:
    """Map NVML's errors to what a user can act on (ECOSYSTEM.md)."""
    name = type(e).__name__
    if "LibraryNotFound" in name:
        return Text(QT_TRANSLATE_NOOP("Engine", "no NVIDIA driver found (libnvidia-ml is not installed): NVIDIA GPU "
                                                "telemetry is unavailable"))
    if "DriverNotLoaded" in name:
        return Text(QT_TRANSLATE_NOOP("Engine", "the NVIDIA driver is installed but not loaded (no GPU, or the kernel "
                                                "module is missing)"))
    if "LibRmVersionMismatch" in name:
        return Text(QT_TRANSLATE_NOOP("Engine", "the NVIDIA driver and its kernel module have different versions: "
                                                "reboot or reinstall the driver"))
    if "NoPermission" in name:
        return Text(QT_TRANSLATE_NOOP("Engine", "no permission to query the NVIDIA driver (check /dev/nvidia* access)"))
    return Text(QT_TRANSLATE_NOOP("Engine", "NVML is unavailable: {error}"), error=str(e))


def _nvml():
    import pynvml  # lazy: pynvml is optional (NVIDIA inventory)

    return pynvml


def init() -> NvmlState:
    """Initialise NVML once. Safe to call repeatedly and from any thread."""
    global _STATE
    with _LOCK:
        if _STATE is not None:
            return _STATE
        try:
            nv = _nvml()
        except ImportError:
            _STATE = NvmlState(False, Text(QT_TRANSLATE_NOOP("Engine", "the nvidia-ml-py package is not installed: "
                                                                       "NVIDIA telemetry is unavailable")))
            return _STATE
        try:
            nv.nvmlInit()
        except Exception as e:  # noqa: BLE001 - every NVML init failure is a state, not a crash
            _STATE = NvmlState(False, _plain_error(e))
            return _STATE
        atexit.register(shutdown)
        st = NvmlState(True, Text(QT_TRANSLATE_NOOP("Engine", "NVML ready")))
        st.driver_version = _call(nv.nvmlSystemGetDriverVersion)
        cv = _call(nv.nvmlSystemGetCudaDriverVersion)
        st.cuda_driver_version = f"{cv // 1000}.{cv % 1000 // 10}" if isinstance(cv, int) else None
        st.nvml_version = _call(nv.nvmlSystemGetNVMLVersion)
        _STATE = st
        return st


def shutdown() -> None:
    """Shut NVML down (after any telemetry thread has stopped: see Sampler.stop)."""
    global _STATE
    with _LOCK:
        if _STATE is not None and _STATE.available:
            try:
                _nvml().nvmlShutdown()
            except Exception:  # noqa: BLE001
                pass
        _STATE = None


def _call(fn, *args):
    """Call an NVML query; ``None`` when the GPU does not support it or it fails."""
    try:
        v = fn(*args)
    except Exception:  # noqa: BLE001 - NotSupported and friends mean "no value"
        return None
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    return v


@dataclass
class GpuInventory:
    index: int
    name: str | None = None
    uuid: str | None = None
    memory_total_bytes: int | None = None
    memory_used_bytes: int | None = None
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    mem_clock_mhz: int | None = None
    mem_clock_max_mhz: int | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    power_limit_default_w: float | None = None
    temperature_c: int | None = None
    utilization_gpu_pct: int | None = None
    utilization_mem_pct: int | None = None
    pcie_gen: int | None = None
    pcie_gen_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    nvlink_active: list | None = None
    ecc_enabled: bool | None = None
    mig_enabled: bool | None = None
    compute_capability: str | None = None
    throttle_reasons: list = field(default_factory=list)
    processes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


_THROTTLE = (("nvmlClocksThrottleReasonSwPowerCap", "power cap"),
             ("nvmlClocksThrottleReasonHwSlowdown", "hardware slowdown"),
             ("nvmlClocksThrottleReasonHwThermalSlowdown", "thermal slowdown"),
             ("nvmlClocksThrottleReasonSwThermalSlowdown", "software thermal slowdown"),
             ("nvmlClocksThrottleReasonHwPowerBrakeSlowdown", "power brake"))


def device_count() -> int:
    if not init().available:
        return 0
    return _call(_nvml().nvmlDeviceGetCount) or 0


def inventory() -> tuple[NvmlState, list[GpuInventory]]:
    """All NVIDIA GPUs with every field NVML can give (``None`` where it cannot)."""
    st = init()
    if not st.available:
        return st, []
    nv = _nvml()
    out = []
    for i in range(device_count()):
        h = _call(nv.nvmlDeviceGetHandleByIndex, i)
        if h is None:
            continue
        g = GpuInventory(index=i)
        g.name = _call(nv.nvmlDeviceGetName, h)
        g.uuid = _call(nv.nvmlDeviceGetUUID, h)
        mem = None
        if hasattr(nv, "nvmlMemory_v2"):
            mem = _call(nv.nvmlDeviceGetMemoryInfo, h, nv.nvmlMemory_v2)  # v1 counts reserved memory as used
        mem = mem or _call(nv.nvmlDeviceGetMemoryInfo, h)
        if mem is not None:
            g.memory_total_bytes, g.memory_used_bytes = int(mem.total), int(mem.used)
        g.sm_clock_mhz = _call(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM)
        g.sm_clock_max_mhz = _call(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM)
        g.mem_clock_mhz = _call(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM)
        g.mem_clock_max_mhz = _call(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM)
        p = _call(nv.nvmlDeviceGetPowerUsage, h)
        g.power_w = p / 1000 if p is not None else None
        pl = _call(nv.nvmlDeviceGetPowerManagementLimit, h)
        g.power_limit_w = pl / 1000 if pl is not None else None
        pd = _call(nv.nvmlDeviceGetPowerManagementDefaultLimit, h)
        g.power_limit_default_w = pd / 1000 if pd is not None else None
        t = None
        if hasattr(nv, "nvmlDeviceGetTemperatureV"):
            t = _call(nv.nvmlDeviceGetTemperatureV, h, nv.NVML_TEMPERATURE_GPU)
        g.temperature_c = t if t is not None else _call(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU)
        u = _call(nv.nvmlDeviceGetUtilizationRates, h)
        if u is not None:
            g.utilization_gpu_pct, g.utilization_mem_pct = u.gpu, u.memory
        g.pcie_gen = _call(nv.nvmlDeviceGetCurrPcieLinkGeneration, h)
        g.pcie_gen_max = _call(nv.nvmlDeviceGetMaxPcieLinkGeneration, h)
        g.pcie_width = _call(nv.nvmlDeviceGetCurrPcieLinkWidth, h)
        g.pcie_width_max = _call(nv.nvmlDeviceGetMaxPcieLinkWidth, h)
        links = []
        for link in range(getattr(nv, "NVML_NVLINK_MAX_LINKS", 18)):
            s = _call(nv.nvmlDeviceGetNvLinkState, h, link)
            if s is None:
                break
            links.append(bool(s))
        g.nvlink_active = links or None
        ecc = _call(nv.nvmlDeviceGetEccMode, h)
        g.ecc_enabled = bool(ecc[0]) if isinstance(ecc, (list, tuple)) else None
        mig = _call(nv.nvmlDeviceGetMigMode, h)
        g.mig_enabled = bool(mig[0]) if isinstance(mig, (list, tuple)) else None
        cc = _call(nv.nvmlDeviceGetCudaComputeCapability, h)
        g.compute_capability = f"{cc[0]}.{cc[1]}" if isinstance(cc, (list, tuple)) else None
        reasons = _call(nv.nvmlDeviceGetCurrentClocksThrottleReasons, h)
        if isinstance(reasons, int):
            g.throttle_reasons = [label for attr, label in _THROTTLE if reasons & getattr(nv, attr, 0)]
        procs = _call(nv.nvmlDeviceGetComputeRunningProcesses, h) or []
        g.processes = [{"pid": pr.pid, "used_bytes": getattr(pr, "usedGpuMemory", None)} for pr in procs]
        out.append(g)
    return st, out


TELEMETRY_FIELDS = ("t_s", "gpu", "sm_clock_mhz", "mem_clock_mhz", "power_w", "temperature_c",
                    "utilization_gpu_pct", "utilization_mem_pct", "memory_used_bytes")


def sample(index: int) -> dict | None:
    """One telemetry sample of GPU ``index`` (like a line of ``nvidia-smi dmon``)."""
    if not init().available:
        return None
    nv = _nvml()
    h = _call(nv.nvmlDeviceGetHandleByIndex, index)
    if h is None:
        return None
    u = _call(nv.nvmlDeviceGetUtilizationRates, h)
    mem = None
    if hasattr(nv, "nvmlMemory_v2"):
        mem = _call(nv.nvmlDeviceGetMemoryInfo, h, nv.nvmlMemory_v2)
    mem = mem or _call(nv.nvmlDeviceGetMemoryInfo, h)
    p = _call(nv.nvmlDeviceGetPowerUsage, h)
    return {"t_s": time.monotonic(), "gpu": index,
            "sm_clock_mhz": _call(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM),
            "mem_clock_mhz": _call(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM),
            "power_w": p / 1000 if p is not None else None,
            "temperature_c": _call(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU),
            "utilization_gpu_pct": u.gpu if u is not None else None,
            "utilization_mem_pct": u.memory if u is not None else None,
            "memory_used_bytes": int(mem.used) if mem is not None else None}
