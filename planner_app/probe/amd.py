"""AMD GPU inventory and telemetry through the ``amdsmi`` Python bindings (ROCm), when they
are installed. Like nvml.py: initialised once, missing fields are None, no library or no
GPU is a state, not an exception."""
from __future__ import annotations

import atexit
import threading

_LOCK = threading.Lock()
_STATE = None


def _amdsmi():
    import amdsmi  # lazy: amdsmi is optional (ROCm)

    return amdsmi


def init() -> tuple[bool, str]:
    global _STATE
    with _LOCK:
        if _STATE is not None:
            return _STATE
        try:
            a = _amdsmi()
        except ImportError:
            _STATE = (False, "the amdsmi package (ROCm) is not installed: AMD GPU telemetry is unavailable")
            return _STATE
        try:
            a.amdsmi_init()
        except Exception as e:  # noqa: BLE001 - any failure is a state
            _STATE = (False, f"AMD SMI is unavailable: {e}")
            return _STATE
        atexit.register(shutdown)
        _STATE = (True, "AMD SMI ready")
        return _STATE


def shutdown() -> None:
    global _STATE
    with _LOCK:
        if _STATE and _STATE[0]:
            try:
                _amdsmi().amdsmi_shut_down()
            except Exception:  # noqa: BLE001
                pass
        _STATE = None


def _call(fn, *args):
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - unsupported field
        return None


def inventory() -> list[dict]:
    """One dict per AMD GPU, in the same field names as nvml.GpuInventory where they exist."""
    ok, _ = init()
    if not ok:
        return []
    a = _amdsmi()
    out = []
    for i, h in enumerate(_call(a.amdsmi_get_processor_handles) or []):
        asic = _call(a.amdsmi_get_gpu_asic_info, h) or {}
        vram = _call(a.amdsmi_get_gpu_vram_usage, h) or {}
        power = _call(a.amdsmi_get_power_info, h) or {}
        temp = _call(a.amdsmi_get_temp_metric, h, a.AmdSmiTemperatureType.EDGE, a.AmdSmiTemperatureMetric.CURRENT) \
            if hasattr(a, "AmdSmiTemperatureType") else None
        act = _call(a.amdsmi_get_gpu_activity, h) or {}
        out.append({"index": i, "name": asic.get("market_name"), "uuid": _call(a.amdsmi_get_gpu_device_uuid, h),
                    "memory_total_bytes": (vram.get("vram_total") or 0) * 2**20 or None,
                    "memory_used_bytes": (vram.get("vram_used") or 0) * 2**20 or None,
                    "power_w": power.get("current_socket_power") or power.get("average_socket_power"),
                    "power_limit_w": power.get("power_limit"), "temperature_c": temp,
                    "utilization_gpu_pct": act.get("gfx_activity"), "utilization_mem_pct": act.get("umc_activity"),
                    "vendor": "AMD"})
    return out
