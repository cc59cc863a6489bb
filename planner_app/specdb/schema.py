"""The documented schema of the spec CSV files (spec_data/SCHEMA.md), as data.

Each column has a kind and a rule; ``validate_frame`` checks a loaded file cell by cell
and raises ``SpecDataError`` naming the file, the line and the column.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")
# a GPU's architecture: sm_<major><minor> (NVIDIA), gfx<target> (AMD) or a lower-case family slug
ARCH_RE = re.compile(r"^(sm_\d{2,3}|gfx[0-9a-f]{3,4}|[a-z][a-z0-9]*)$")


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def one_line(text):
    """``text`` with control characters (newlines included) written as escapes."""
    if not isinstance(text, str):
        return text
    return _CONTROL_RE.sub(lambda m: repr(m.group())[1:-1], text)


class SpecDataError(ValueError):
    """A spec file breaks its schema: names the file, line (1 = header) and column."""

    def __init__(self, path: str, line: int | None, column: str | None, message: str):
        # a column or message may carry text from the file (a key with a newline): shown escaped, one line
        path, column, message = one_line(path), one_line(column), one_line(message)
        self.path, self.line, self.column, self.message = path, line, column, message
        where = path
        if line is not None:
            where += f", line {line}"
        if column is not None:
            where += f", column {column}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Column:
    name: str
    kind: str = "text"  # text | number | int | date | bool | id
    required: bool = False
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None


def _num(name, required=False, lo=0.0, hi=None):
    return Column(name, "number", required, lo, hi)


def _int(name, required=False, lo=0, hi=None):
    return Column(name, "int", required, lo, hi)


PROVENANCE = (Column("source_url", required=True), Column("retrieved", "date", required=True), Column("notes"))

GPU_COLUMNS = (
    Column("id", "id", True),
    Column("vendor", required=True, choices=("NVIDIA", "AMD", "Intel", "Huawei", "Cambricon", "Kunlunxin", "Hygon")),
    Column("name", required=True), Column("aliases"), Column("form_factor", required=True),
    _num("memory_gb", True, 1, 2048), Column("memory_type", required=True), _num("mem_bw_gb_s", True, 10, 100000),
    _num("fp64_tflops", hi=1000), _num("fp32_tflops", hi=1000),
    _num("tf32_tflops", hi=20000), _num("bf16_tflops", hi=40000), _num("fp16_tflops", hi=40000),
    _num("fp8_tflops", hi=80000), _num("fp4_tflops", hi=160000), _num("int8_tops", hi=80000),
    _num("tf32_sparse_tflops", hi=40000), _num("bf16_sparse_tflops", hi=80000),
    _num("fp16_sparse_tflops", hi=80000), _num("fp8_sparse_tflops", hi=160000),
    _num("fp4_sparse_tflops", hi=320000), _num("int8_sparse_tops", hi=160000),
    _num("tdp_w", hi=5000), Column("link", required=True), _num("link_bw_gb_s", True, 0, 10000),
    _int("pcie_gen", False, 1, 7), _int("pcie_lanes", False, 1, 32), _int("year", False, 2010, 2035),
    # NVIDIA: sm_<compute capability> (sm_90 is 9.0); AMD: the LLVM gfx target; others: a family slug.
    # core/serving/support.py decides from it which serving precisions the GPU runs.
    Column("arch", "arch"),
) + PROVENANCE

DENSE_SPARSE_PAIRS = (("tf32_tflops", "tf32_sparse_tflops"), ("bf16_tflops", "bf16_sparse_tflops"),
                      ("fp16_tflops", "fp16_sparse_tflops"), ("fp8_tflops", "fp8_sparse_tflops"),
                      ("fp4_tflops", "fp4_sparse_tflops"), ("int8_tops", "int8_sparse_tops"))

INSTANCE_COLUMNS = (
    Column("provider", required=True), Column("region", required=True), Column("instance_id", required=True),
    Column("gpu_id", "id", True), _int("gpu_count", True, 1, 1024), _num("gpu_fraction", True, 0.01, 1.0),
    _int("vcpu", lo=0, hi=4096), _num("ram_gb", hi=100000), _num("local_nvme_gb", hi=10**6),
    _num("network_gbit_s", hi=100000),
    Column("fabric", choices=("efa", "infiniband", "rdma", "erdma", "ethernet")),
    Column("fabric_id", "id"), _int("nics", False, 1, 64), Column("intra_node_link", "id", True),
    _num("price_on_demand_hr", hi=10000), _num("price_1yr_hr", hi=10000), _num("price_3yr_hr", hi=10000),
    _num("price_spot_hr", hi=10000), Column("currency", required=True, choices=("USD", "CNY")),
    Column("price_date", "date"),
    # A monthly subscription (Alibaba/Tencent "包年包月", one month) per instance-month in the row's
    # currency, as the provider sells it: kept apart from the hourly prices (not converted), with
    # its own date because it often comes from another page than the hourly price.
    _num("price_sub_month", hi=10**7), Column("price_sub_date", "date"),
) + PROVENANCE

FABRIC_COLUMNS = (
    Column("id", "id", True), Column("name", required=True), Column("scope", required=True, choices=("intra", "inter")),
    _num("bw_gb_s", True, 0.1, 10000), _num("latency_us", True, 0.01, 10000), _num("efficiency", True, 0.05, 1.0),
) + PROVENANCE

MODEL_COLUMNS = (
    Column("id", "id", True), Column("name", required=True), Column("aliases"),
    Column("arch", required=True, choices=("gpt2", "llama", "bert", "moe", "deepseek", "cnn")),
    _int("hidden"), _int("layers"), _int("heads"), _int("kv_heads"), _int("head_dim"), _int("ffn_hidden"),
    _int("vocab"), _int("max_positions"), Column("position", choices=("learned", "rope", "none", "")),
    Column("norm", choices=("layernorm", "rmsnorm", "")), Column("mlp", choices=("swiglu", "gelu", "gelu_tanh", "")),
    Column("qkv_bias", "bool"), Column("out_bias", "bool"), Column("mlp_bias", "bool"), Column("norm_bias", "bool"),
    Column("tied_embeddings", "bool"), _int("type_vocab"), _num("attn_dropout", hi=1), _num("hidden_dropout", hi=1),
    _num("embed_dropout", hi=1), _int("sliding_window"), _int("experts"), _int("top_k"), _int("expert_ffn_hidden"),
    _int("shared_experts"), _int("dense_layers"), _int("q_lora_rank"), _int("kv_lora_rank"), _int("qk_nope_dim"),
    _int("qk_rope_dim"), _int("v_head_dim"), _int("params"), _num("fwd_flops_per_sample"),
    _num("act_bytes_per_sample_fp32"), _int("default_seq_len"),
) + PROVENANCE

FILES = {"gpus": GPU_COLUMNS, "instances": INSTANCE_COLUMNS, "fabrics": FABRIC_COLUMNS, "models": MODEL_COLUMNS}


def parse_cell(col: Column, raw: str, path: str, line: int):
    """Convert one cell; raises SpecDataError with file, line and column."""
    s = raw.strip()
    if s == "":
        if col.required:
            raise SpecDataError(path, line, col.name, "is required but empty")
        return None if col.kind in ("number", "int") else ("" if col.kind != "bool" else False)
    if col.kind in ("number", "int"):
        try:
            v = float(s)
        except ValueError:
            raise SpecDataError(path, line, col.name, f"must be a number, got {s!r}") from None
        if not math.isfinite(v):
            raise SpecDataError(path, line, col.name, f"must be finite, got {s!r}")
        if col.kind == "int":
            if v != int(v):
                raise SpecDataError(path, line, col.name, f"must be a whole number, got {s!r}")
            v = int(v)
        if col.min is not None and v < col.min:
            raise SpecDataError(path, line, col.name, f"must be at least {col.min:g}, got {s}")
        if col.max is not None and v > col.max:
            raise SpecDataError(path, line, col.name, f"must be at most {col.max:g}, got {s}")
        return v
    if col.kind == "bool":
        if s.lower() in ("1", "true", "yes"):
            return True
        if s.lower() in ("0", "false", "no"):
            return False
        raise SpecDataError(path, line, col.name, f"must be true or false, got {s!r}")
    if col.kind == "date" and not DATE_RE.match(s):
        raise SpecDataError(path, line, col.name, f"must be a date YYYY-MM-DD, got {s!r}")
    if col.kind == "arch" and not ARCH_RE.match(s):
        raise SpecDataError(path, line, col.name, f"must be sm_<compute capability> (NVIDIA, e.g. sm_90), a gfx "
                                                  f"target (AMD, e.g. gfx942) or a lower-case family name; got {s!r}")
    if col.kind == "id" and not ID_RE.match(s):
        raise SpecDataError(path, line, col.name, f"must be a lower-case id of letters, digits, '.' and '-', got {s!r}")
    if col.choices and s not in col.choices:
        raise SpecDataError(path, line, col.name, f"must be one of {', '.join(c for c in col.choices if c)}; got {s!r}")
    return s
