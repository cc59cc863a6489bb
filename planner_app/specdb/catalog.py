"""The shipped spec database: load, validate, query, and convert rows to engine types.

Files are read with pandas as text and checked cell by cell against ``schema.py``; any
error names the file, the line and the column. User rows (``userdb.py``) extend or
override shipped rows without touching the shipped files.
"""
from __future__ import annotations

import os
from functools import lru_cache

import pandas as pd

from planner_app.core.errors import InputError
from planner_app.core.hardware import FabricSpec, GpuSpec, InstanceSpec, Prices
from planner_app.core.model import ModelSpec
from planner_app.paths import spec_data_dir
from planner_app.specdb.names import best_match, normalise
from planner_app.specdb.schema import DENSE_SPARSE_PAIRS, FILES, SpecDataError, parse_cell

KEY_COLUMNS = {"gpus": ("id",), "fabrics": ("id",), "models": ("id",),
               "instances": ("provider", "region", "instance_id")}


def load_table(path: str, kind: str) -> pd.DataFrame:
    """Read and validate one spec CSV; returns typed columns in schema order."""
    columns = FILES[kind]
    rel = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8")
    except FileNotFoundError:
        raise SpecDataError(rel, None, None, "file not found") from None
    except UnicodeDecodeError as e:
        raise SpecDataError(rel, None, None, f"is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except pd.errors.ParserError as e:
        msg = str(e).strip().splitlines()[-1]
        line = None
        if "line" in msg:
            try:
                line = int(msg.split("line")[1].split(",")[0].strip())
            except ValueError:
                line = None
        raise SpecDataError(rel, line, None, f"is not valid CSV: {msg}") from None
    except pd.errors.EmptyDataError:
        raise SpecDataError(rel, 1, None, "is empty: a header row is required") from None
    header = list(raw.columns)
    names = [c.name for c in columns]
    missing = [n for n in names if n not in header]
    if missing:
        raise SpecDataError(rel, 1, missing[0], "is missing from the header")
    unknown = [h for h in header if h not in names]
    if unknown:
        raise SpecDataError(rel, 1, unknown[0], f"is not a known column (allowed: {', '.join(names)})")
    records = []
    seen = {}
    for i, row in enumerate(raw.itertuples(index=False, name=None)):
        line = i + 2
        cells = dict(zip(header, row))
        rec = {c.name: parse_cell(c, cells[c.name], rel, line) for c in columns}
        key = tuple(rec[k] for k in KEY_COLUMNS[kind])
        if key in seen:
            raise SpecDataError(rel, line, KEY_COLUMNS[kind][-1], f"duplicates line {seen[key]} ({'/'.join(map(str, key))})")
        seen[key] = line
        if kind == "gpus":
            for dense, sparse in DENSE_SPARSE_PAIRS:
                if rec[dense] is not None and rec[sparse] is not None and rec[sparse] < rec[dense]:
                    raise SpecDataError(rel, line, sparse, f"sparse rate {rec[sparse]:g} is below the dense {rec[dense]:g}")
        if kind == "instances":
            priced = any(rec[c] is not None for c in ("price_on_demand_hr", "price_1yr_hr", "price_3yr_hr", "price_spot_hr"))
            if priced and not rec["price_date"]:
                raise SpecDataError(rel, line, "price_date", "is required when a price is given")
        records.append(rec)
    df = pd.DataFrame.from_records(records, columns=names)
    df.attrs["path"] = rel
    return df


class SpecDB:
    """GPUs, instances, fabrics and model presets, shipped rows plus the user's rows."""

    def __init__(self, data_dir: str | None = None, user_db=None):
        self.data_dir = data_dir or spec_data_dir()
        self.tables = {k: load_table(os.path.join(self.data_dir, f"{k}.csv"), k) for k in FILES}
        self.tables = {k: v.assign(origin="shipped") for k, v in self.tables.items()}
        self.user_db = user_db
        if user_db is not None:
            self._merge_user_rows()
        self._check_references()
        self._index = {k: self._build_index(k) for k in ("gpus", "fabrics", "models")}

    # ---- tables -------------------------------------------------------------------------
    @property
    def gpus(self) -> pd.DataFrame:
        return self.tables["gpus"]

    @property
    def instances(self) -> pd.DataFrame:
        return self.tables["instances"]

    @property
    def fabrics(self) -> pd.DataFrame:
        return self.tables["fabrics"]

    @property
    def models(self) -> pd.DataFrame:
        return self.tables["models"]

    def _merge_user_rows(self):
        for kind in ("gpus", "instances", "fabrics", "models"):
            rows = self.user_db.rows(kind)
            if not rows:
                continue
            user = pd.DataFrame.from_records(rows).assign(origin="user")
            keys = list(KEY_COLUMNS[kind])
            base = self.tables[kind]
            merged = pd.concat([base, user], ignore_index=True)
            self.tables[kind] = merged.drop_duplicates(subset=keys, keep="last").reset_index(drop=True)
        overrides = self.user_db.price_overrides()
        if overrides:
            df = self.tables["instances"].copy()
            for o in overrides:
                m = (df.provider == o["provider"]) & (df.region == o["region"]) & (df.instance_id == o["instance_id"])
                for col in ("price_on_demand_hr", "price_1yr_hr", "price_3yr_hr", "price_spot_hr", "currency",
                            "price_date"):
                    if o.get(col) not in (None, ""):
                        df.loc[m, col] = o[col]
                df.loc[m, "origin"] = "user price"
            self.tables["instances"] = df

    def _check_references(self):
        gpu_ids = set(self.gpus.id)
        fabric_ids = set(self.fabrics.id)
        path = self.instances.attrs.get("path", "spec_data/instances.csv")
        for i, row in enumerate(self.instances.itertuples(index=False)):
            if row.gpu_id not in gpu_ids:
                raise SpecDataError(path, i + 2, "gpu_id", f"{row.gpu_id!r} is not a GPU id in gpus.csv")
            for col in ("fabric_id", "intra_node_link"):
                if getattr(row, col) and getattr(row, col) not in fabric_ids:
                    raise SpecDataError(path, i + 2, col, f"{getattr(row, col)!r} is not a fabric id in fabrics.csv")

    def _build_index(self, kind: str) -> dict:
        idx = {}
        df = self.tables[kind]
        for row in df.itertuples(index=False):
            names = [row.id, row.name] + [a for a in (getattr(row, "aliases", "") or "").split(";") if a.strip()]
            for n in names:
                idx.setdefault(normalise(n), row.id)
        return idx

    # ---- lookups ------------------------------------------------------------------------
    def _find(self, kind: str, name: str, field: str) -> pd.Series:
        key = best_match(name, self._index[kind], field, kind)
        df = self.tables[kind]
        return df[df.id == key].iloc[0]

    def gpu(self, name: str) -> GpuSpec:
        """A GPU by id, name or alias, tolerant of case and spacing ("h100 sxm", "H100-SXM5-80GB")."""
        return gpu_from_row(self._find("gpus", name, "gpu"))

    def fabric(self, fabric_id: str) -> FabricSpec:
        df = self.fabrics
        rows = df[df.id == fabric_id.strip().lower()]
        if rows.empty:
            inter = ", ".join(df[df.scope == "inter"].id)
            raise InputError("fabric", f"unknown fabric {fabric_id!r}; allowed: {inter}")
        return fabric_from_row(rows.iloc[0])

    def instance(self, instance_id: str) -> InstanceSpec:
        """An instance by its id (``p5.48xlarge``) or ``provider:region:id`` when ambiguous."""
        df = self.instances
        want = instance_id.strip()
        if want.count(":") == 2:
            p, r, i = want.split(":")
            rows = df[(df.provider.str.lower() == p.lower()) & (df.region == r) & (df.instance_id == i)]
        else:
            rows = df[df.instance_id.str.lower() == want.lower()]
        if rows.empty:
            rows = df[df.instance_id.map(normalise) == normalise(want)]
        if rows.empty:
            near = [i for i in df.instance_id if normalise(want)[:4] in normalise(i)][:6]
            hint = f"; similar: {', '.join(near)}" if near else "; see `gpu-planner specs instances`"
            raise InputError("instance", f"unknown instance {instance_id!r}{hint}")
        return instance_from_row(rows.iloc[0])

    def model(self, name: str) -> ModelSpec:
        return model_from_row(self._find("models", name, "model"))

    def model_ids(self) -> list[str]:
        return list(self.models.id)


def _f(v, default=0.0) -> float:
    return default if v is None or (isinstance(v, float) and v != v) else float(v)


def gpu_from_row(r) -> GpuSpec:
    return GpuSpec(id=r["id"], name=r["name"], vendor=r["vendor"], memory_gb=_f(r["memory_gb"]),
                   mem_bw_gb_s=_f(r["mem_bw_gb_s"]), fp64_tflops=_f(r["fp64_tflops"]),
                   fp32_tflops=_f(r["fp32_tflops"]), tf32_tflops=_f(r["tf32_tflops"]),
                   bf16_tflops=_f(r["bf16_tflops"]), fp16_tflops=_f(r["fp16_tflops"]),
                   fp8_tflops=_f(r["fp8_tflops"]), int8_tops=_f(r["int8_tops"]), tdp_w=_f(r["tdp_w"]),
                   link=r["link"], link_bw_gb_s=_f(r["link_bw_gb_s"]), pcie_gen=int(_f(r["pcie_gen"], 4)),
                   pcie_lanes=int(_f(r["pcie_lanes"], 16)), source=r["source_url"], retrieved=r["retrieved"])


def fabric_from_row(r) -> FabricSpec:
    return FabricSpec(id=r["id"], name=r["name"], scope=r["scope"], bw_gb_s=_f(r["bw_gb_s"]),
                      latency_us=_f(r["latency_us"]), efficiency=_f(r["efficiency"], 0.8),
                      source=r["source_url"], retrieved=r["retrieved"])


def _price(v):
    return None if v is None or (isinstance(v, float) and v != v) else float(v)


def instance_from_row(r) -> InstanceSpec:
    prices = Prices(currency=r["currency"], on_demand=_price(r["price_on_demand_hr"]),
                    reserved_1yr=_price(r["price_1yr_hr"]), reserved_3yr=_price(r["price_3yr_hr"]),
                    spot=_price(r["price_spot_hr"]), date=r["price_date"])
    return InstanceSpec(provider=r["provider"], region=r["region"], instance_id=r["instance_id"],
                        gpu_id=r["gpu_id"], gpu_count=int(r["gpu_count"]), gpu_fraction=_f(r["gpu_fraction"], 1.0),
                        vcpu=int(_f(r["vcpu"])), ram_gb=_f(r["ram_gb"]), local_nvme_gb=_f(r["local_nvme_gb"]),
                        network_gbit_s=_f(r["network_gbit_s"]), fabric=r["fabric"] or "unknown", fabric_id=r["fabric_id"] or "",
                        nics=int(_f(r["nics"], 1)), intra_node_link=r["intra_node_link"], prices=prices,
                        source=r["source_url"], retrieved=r["retrieved"])


_MODEL_INT_FIELDS = ("hidden", "layers", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab", "max_positions",
                     "type_vocab", "sliding_window", "experts", "top_k", "expert_ffn_hidden", "shared_experts",
                     "dense_layers", "q_lora_rank", "kv_lora_rank", "qk_nope_dim", "qk_rope_dim", "v_head_dim")


def model_from_row(r) -> ModelSpec:
    kw = {f: int(_f(r[f])) for f in _MODEL_INT_FIELDS}
    for f in ("qkv_bias", "out_bias", "mlp_bias", "norm_bias", "tied_embeddings"):
        kw[f] = bool(r[f])
    for f in ("attn_dropout", "hidden_dropout", "embed_dropout"):
        kw[f] = _f(r[f])
    for f in ("position", "norm", "mlp"):
        if r[f]:
            kw[f] = r[f]
    return ModelSpec(name=r["id"], arch=r["arch"], params_given=int(_f(r["params"])),
                     fwd_flops_per_sample=_f(r["fwd_flops_per_sample"]),
                     act_bytes_per_sample_fp32=_f(r["act_bytes_per_sample_fp32"]),
                     source=r["source_url"], notes=r["notes"], **kw)


@lru_cache(maxsize=4)
def shipped_db(data_dir: str | None = None) -> SpecDB:
    """The shipped database, loaded once per process."""
    return SpecDB(data_dir)
