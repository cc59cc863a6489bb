"""Which weight and KV-cache precisions each serving engine runs on which GPU (issue 15).

One table, keyed by (engine, precision): the minimum NVIDIA compute capability (``GpuSpec.arch``
``sm_XY``, compute capability X.Y as the integer XY) and the other vendors' architectures (AMD gfx
targets, Intel Gaudi, Huawei Ascend) where the engine has kernels for it, each row with its source.
The serve command, the SLO search and the Serve page ask :func:`check` / :func:`allowed`, so a
precision a GPU cannot run is refused (or skipped by the search) in one place. A GPU whose
architecture is unknown (a user's own row without ``arch``) is not refused; the notes say so.

The precisions are the serve command's (core/serving/engine.py SERVE_WEIGHT_BYTES): ``fp8`` weights are an
FP8 checkpoint (W8A8 on fp8 tensor cores, W8A16 Marlin below them), ``int8``/``int4`` weight-only
GPTQ/AWQ-style W8A16/W4A16, ``fp4`` NVFP4 (MXFP4 on AMD), ``bf16`` 16-bit (fp16 before sm80, which
lacks bf16; the engines cast to it).
"""
from __future__ import annotations

from dataclasses import dataclass

from planner_app.core.errors import InputError
from planner_app.core.text import QT_TRANSLATE_NOOP, Text


@dataclass(frozen=True)
class Need:
    """What a precision (or an engine) needs: the lowest NVIDIA compute capability (major x 10 + minor;
    None: not on NVIDIA) and the other architectures it runs on; ``kernel`` says what runs it."""

    min_cc: int | None
    archs: tuple
    kernel: str
    source: str

    def runs_on(self, gpu) -> bool | None:
        """True/False for a GPU of known architecture; None when its architecture is unknown."""
        cc = gpu.compute_capability
        if cc is not None:
            return self.min_cc is not None and cc >= self.min_cc
        return gpu.arch in self.archs if gpu.arch else None


MI200, MI300, MI350 = "gfx90a", "gfx942", "gfx950"  # ROCm GPU hardware specifications
GAUDI = ("gaudi2", "gaudi3")
ASCEND = ("ascend910b",)

VLLM_DOCS_HW = "vLLM docs features/quantization/README.md, 'Supported Hardware' table"
ENGINES = {
    "vllm": Need(70, (MI200, MI300, MI350) + GAUDI + ASCEND, "vLLM",
                 "vLLM docs getting_started/installation/gpu (v0.9-v0.14: compute capability 7.0 or higher; "
                 "MI200 gfx90a, MI300 gfx942, MI350 gfx950); Gaudi through the vllm-gaudi plugin, Ascend "
                 "through vllm-ascend"),
    "sglang": Need(75, (MI300, MI350) + ASCEND, "SGLang",
                   "sglang/srt/model_executor/model_runner.py load_model ('SGLang only supports sm75 and "
                   "above'); SGLang docs platforms: AMD GPUs (MI300X/MI325X/MI355X), Ascend NPUs"),
    "trtllm": Need(80, (), "TensorRT-LLM",
                   "TensorRT-LLM docs reference/support-matrix.md: Ampere, Ada, Hopper, Blackwell"),
}

_CAST_16 = "16-bit GEMMs (fp16 before sm80, which has no bf16)"
WEIGHTS = {
    ("vllm", "bf16"): Need(70, ENGINES["vllm"].archs, _CAST_16, "vLLM casts bfloat16 to float16 below "
                           "compute capability 8.0 (vllm/config, model dtype)"),
    ("vllm", "fp8"): Need(75, (MI300, MI350) + GAUDI, "FP8 Marlin W8A16 from sm75, FP8 W8A8 from sm89",
                          VLLM_DOCS_HW + " (FP8 W8A8: Ada, Hopper, AMD); vllm/model_executor/layers/quantization/"
                          "utils/marlin_utils_fp8.py is_fp8_marlin_supported (sm75); AMD needs fp8 hardware "
                          "(MI300, gfx942, and later); Gaudi 2/3 through vllm-gaudi (Intel Neural Compressor)"),
    ("vllm", "int8"): Need(70, ASCEND, "GPTQ 8-bit W8A16 (Marlin from sm75)",
                           VLLM_DOCS_HW + " (GPTQ: Volta to Hopper, not AMD GPUs); Ascend W8A8 through vllm-ascend"),
    ("vllm", "int4"): Need(70, (), "GPTQ/AWQ 4-bit W4A16 (Marlin from sm75)",
                           VLLM_DOCS_HW + " (GPTQ: Volta to Hopper; AWQ and Marlin: not AMD GPUs); "
                           "utils/marlin_utils.py query_marlin_supported_quant_types (none below sm75)"),
    ("vllm", "fp4"): Need(75, (MI350,), "NVFP4: FP4 Marlin W4A16 from sm75, FP4 tensor cores from sm100; "
                          "MXFP4 on MI350", "vllm/model_executor/layers/quantization/utils/marlin_utils_fp4.py "
                          "is_fp4_marlin_supported (sm75); vLLM docs features/quantization/quark.md (MXFP4, gfx950)"),
    ("sglang", "bf16"): Need(75, ENGINES["sglang"].archs, _CAST_16,
                             "sglang model_runner.py: 'Compute capability below sm80. Use float16'"),
    ("sglang", "fp8"): Need(80, (MI300, MI350), "FP8 Marlin W8A16 on sm80-sm89, FP8 W8A8 from sm89",
                            "sglang/srt/layers/quantization/fp8.py Fp8Config.get_min_capability (80) and "
                            "can_auto_enable_marlin_fp8"),
    ("sglang", "int8"): Need(80, (), "GPTQ 8-bit Marlin W8A16", "sglang/srt/layers/quantization/marlin_utils.py "
                             "query_marlin_supported_quant_types (none below sm80)"),
    ("sglang", "int4"): Need(80, (), "AWQ/GPTQ 4-bit Marlin W4A16", "sglang/srt/layers/quantization/"
                             "marlin_utils.py query_marlin_supported_quant_types (none below sm80)"),
    ("sglang", "fp4"): Need(75, (MI350,), "NVFP4 (FP4 Marlin W4A16 from sm75, FP4 tensor cores from sm100)",
                            "sglang/srt/layers/quantization/marlin_utils_fp4.py is_fp4_marlin_supported (sm75)"),
    ("trtllm", "bf16"): Need(80, (), "16-bit GEMMs", ENGINES["trtllm"].source),
    ("trtllm", "fp8"): Need(89, (), "FP8 W8A8", "TensorRT-LLM support-matrix.md precision: FP8 on Ada (SM89) and "
                            "Hopper (SM90), not on Ampere"),
    ("trtllm", "int8"): Need(80, (), "INT8 weight-only W8A16", "TensorRT-LLM support-matrix.md: INT8 from Ampere"),
    ("trtllm", "int4"): Need(80, (), "INT4 AWQ/GPTQ W4A16", "TensorRT-LLM support-matrix.md: INT4 from Ampere"),
    ("trtllm", "fp4"): Need(90, (), "NVFP4 on Blackwell; MXFP4 MoE weights with BF16 activations on Hopper",
                            "TensorRT-LLM docs features/quantization (FP4 on Blackwell); its GPT-OSS deployment "
                            "guide (deployment-guide-for-gpt-oss-on-trtllm.html) runs MXFP4 weights on H200/H100 "
                            "with BF16 activations (Triton MoE backend)"),
}

# fp8 KV storage is a conversion in the attention kernels, not a tensor-core format: vLLM and SGLang
# store it on every GPU they run on (fp8_e5m2 there; the default e4m3 needs sm89 in the Triton
# kernels, vLLM issues #26431 and #54219; vLLM issue #3965: an A100 runs fp8_e5m2 KV).
FP8_KV_NOTE_CC = 89
KV = {
    ("vllm", "bf16"): Need(70, ENGINES["vllm"].archs, "16-bit KV cache", ENGINES["vllm"].source),
    ("vllm", "fp8"): Need(70, (MI200, MI300, MI350) + GAUDI, "fp8 KV cache",
                          "vLLM docs features/quantization/quantized_kvcache.md (fp8 on CUDA 11.8+ and ROCm); "
                          "Gaudi through vllm-gaudi"),
    ("sglang", "bf16"): Need(75, ENGINES["sglang"].archs, "16-bit KV cache", ENGINES["sglang"].source),
    ("sglang", "fp8"): Need(75, (MI300, MI350), "fp8 KV cache",
                            "SGLang docs advanced_features/quantized_kv_cache.md (fp8_e4m3, fp8_e5m2)"),
    ("trtllm", "bf16"): Need(80, (), "16-bit KV cache", ENGINES["trtllm"].source),
    ("trtllm", "fp8"): Need(89, (), "fp8 KV cache", "TensorRT-LLM support-matrix.md precision: FP8 on Ada and "
                            "Hopper, not on Ampere (which uses INT8 KV)"),
}

# Where the precision runs on its own tensor cores (its GEMMs at the fp8 rate); below, the weights
# are dequantised to 16 bits in the GEMM (Marlin W8A16/W4A16) and the GEMMs run at the 16-bit rate.
NATIVE = {
    "fp8": Need(89, (MI300, MI350) + GAUDI, "FP8 tensor cores", VLLM_DOCS_HW + " (FP8 W8A8: Ada, Hopper, AMD)"),
    "fp4": Need(100, (MI350,), "FP4 tensor cores", "NVIDIA Blackwell (sm100+) and AMD CDNA4 (gfx950) datasheets"),
}


def _arch(gpu) -> str:
    cc = gpu.compute_capability
    return f"sm_{cc}" if cc is not None else gpu.arch


def _cc_text(cc: int) -> str:
    return f"{cc // 10}.{cc % 10}"


def _needs_text(need: Need) -> str:
    parts = [f"compute capability {_cc_text(need.min_cc)}+"] if need.min_cc is not None else []
    if need.archs:
        parts.append("/".join(need.archs))
    return " or ".join(parts) or "no GPU"


def engines_on(gpu) -> list[str]:
    """The engines that run on ``gpu`` (all of them when its architecture is unknown)."""
    return [e for e, need in ENGINES.items() if need.runs_on(gpu) is not False]


def allowed(gpu, engine: str, table: dict) -> list[str]:
    """The precisions of ``table`` (WEIGHTS or KV) that ``engine`` runs on ``gpu``; every one when its
    architecture is unknown, none when the engine does not run on it."""
    if ENGINES[engine].runs_on(gpu) is False:
        return []
    return [d for (e, d), need in table.items() if e == engine and need.runs_on(gpu) is not False]


def check(gpu, engine: str, weights_dtype: str, kv_dtype: str) -> list:
    """Raise InputError naming ``engine``, ``weights_dtype`` or ``kv_dtype`` when ``gpu`` cannot run
    them, with what it can run; else the notes (Text) on how it runs them."""
    eng = ENGINES[engine]
    if eng.runs_on(gpu) is False:
        others = [e for e in engines_on(gpu) if e != engine]
        alt = (f"engines that run on it: {', '.join(others)}" if others else
               "none of vllm, sglang, trtllm has an upstream build for it")
        raise InputError("engine", f"{engine} does not run on {gpu.name} ({_arch(gpu)}): {eng.kernel} runs on "
                                   f"{_needs_text(eng)}; {alt}")
    for field, table, dtype in (("weights_dtype", WEIGHTS, weights_dtype), ("kv_dtype", KV, kv_dtype)):
        need = table[(engine, dtype)]
        if need.runs_on(gpu) is False:
            what = f"weights ({need.kernel}) run" if field == "weights_dtype" else "KV cache runs"
            ok = ", ".join(allowed(gpu, engine, table))
            raise InputError(field, f"{dtype} {what} on {_needs_text(need)} with {engine}; "
                                    f"{gpu.name} is {_arch(gpu)}: allowed on it: {ok}")
    return notes(gpu, engine, weights_dtype, kv_dtype)


def notes(gpu, engine: str, weights_dtype: str, kv_dtype: str) -> list:
    """How ``gpu`` runs the precisions (assumption texts); [] where nothing needs saying."""
    out = []
    cc = gpu.compute_capability
    if not gpu.arch:
        out.append(Text(QT_TRANSLATE_NOOP("Engine", "{gpu}: architecture unknown (no arch in its spec row), so "
                                                    "whether {engine} runs {wd} weights and a {kd} KV cache on it "
                                                    "is not checked"),
                        gpu=gpu.name, engine=engine, wd=weights_dtype, kd=kv_dtype))
        return out
    if engine == "vllm" and cc is not None and cc < 75:
        out.append(Text(QT_TRANSLATE_NOOP("Engine", "vLLM's installation docs from v0.31 ask for compute capability "
                                                    "7.5 or newer; {gpu} ({arch}) needs an earlier vLLM"),
                        gpu=gpu.name, arch=_arch(gpu)))
    if weights_dtype in NATIVE and NATIVE[weights_dtype].runs_on(gpu) is False:
        out.append(Text(QT_TRANSLATE_NOOP("Engine", "{wd} weights on {gpu} ({arch}): no {wd} tensor cores, so the "
                                                    "GEMMs dequantise the weights to 16 bits (weight-only Marlin) "
                                                    "and run at the 16-bit rate"),
                        wd=weights_dtype, gpu=gpu.name, arch=_arch(gpu)))
    if kv_dtype == "fp8" and cc is not None and cc < FP8_KV_NOTE_CC and engine in ("vllm", "sglang"):
        out.append(Text(QT_TRANSLATE_NOOP("Engine", "fp8 KV cache on {gpu} ({arch}): fp8_e5m2; {engine}'s default "
                                                    "e4m3 needs compute capability 8.9 in its Triton attention "
                                                    "kernels (vLLM issues #26431, #54219)"),
                        gpu=gpu.name, arch=_arch(gpu), engine=engine))
    return out


def gemm_bits(gpu, weights_dtype: str, default: int) -> int:
    """The GEMM precision ``weights_dtype`` runs at on ``gpu``: 16 where fp8/fp4 have no tensor cores
    (weight-only Marlin), else ``default`` (core/serving/engine.py GEMM_BITS)."""
    need = NATIVE.get(weights_dtype)
    return 16 if need is not None and need.runs_on(gpu) is False else default
