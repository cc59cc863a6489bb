"""The shipped spec database: load, validate, query, and convert rows to engine types.

Files are read with the standard ``csv`` module as text and checked cell by cell against
``schema.py``; any error names the file, the line and the column. Rows are held as lists
of dicts of typed values (``SpecDB.records``): pandas costs ~0.5 s to import, more than
the whole ``gpu-planner estimate`` process may take, so it is imported only when a caller
asks for a DataFrame (``db.gpus`` and friends). User rows (``userdb.py``) extend or
override shipped rows without touching the shipped files.
"""
from __future__ import annotations

import csv
import os
from functools import lru_cache

from planner_app.core.errors import InputError
from planner_app.core.hardware.specs import FabricSpec, GpuSpec, InstanceSpec, Prices
from planner_app.core.models.spec import ModelSpec
from planner_app.paths import spec_data_dir
from planner_app.specdb.names import best_match, normalise
from planner_app.specdb.schema import (
    DENSE_SPARSE_PAIRS,
    FILES,
    SpecDataError,
    parse_cell,
)

KEY_COLUMNS = {"gpus": ("id",), "fabrics": ("id",), "models": ("id",),
               "instances": ("provider", "region", "instance_id")}
PRICE_OVERRIDE_COLUMNS = ("price_on_demand_hr", "price_1yr_hr", "price_3yr_hr", "price_spot_hr", "currency",
                          "price_date")


def _rel_path(path: str) -> str:
    return os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))


def _read_csv(path: str, rel: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the (line, cells) of each data row. Blank lines are skipped and
    "line" counts records with the header as line 1, as the pandas loader did (a quoted
    cell spanning two physical lines is still one line here)."""
    try:
        # utf-8-sig: a byte-order mark (spreadsheet exports) is not part of the first column's name
        with open(path, encoding="utf-8-sig", newline="") as f:
            # strict: an unterminated quote is an error, not a cell that swallows the rest of the file
            reader = csv.reader(f, strict=True)
            header = None
            rows = []
            try:
                header = next(reader, None)
                for cells in reader:
                    if cells:
                        rows.append((len(rows) + 2, cells))
            except csv.Error as e:
                raise SpecDataError(rel, len(rows) + 2 if header else 1, None, f"is not valid CSV: {e}") from None
    except FileNotFoundError:
        raise SpecDataError(rel, None, None, "file not found") from None
    except UnicodeDecodeError as e:
        raise SpecDataError(rel, None, None, f"is not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not header:
        raise SpecDataError(rel, 1, None, "is empty: a header row is required")
    return header, rows


def load_rows(path: str, kind: str) -> list[dict]:
    """Read and validate one spec CSV; returns one dict of typed values per row, keys in
    schema order."""
    columns = FILES[kind]
    rel = _rel_path(path)
    header, raw_rows = _read_csv(path, rel)
    names = [c.name for c in columns]
    missing = [n for n in names if n not in header]
    if missing:
        raise SpecDataError(rel, 1, missing[0], "is missing from the header")
    unknown = [h for h in header if h not in names]
    if unknown:
        raise SpecDataError(rel, 1, unknown[0], f"is not a known column (allowed: {', '.join(names)})")
    position = {h: i for i, h in enumerate(header)}
    cells = [(c.name, c, position[c.name]) for c in columns]  # each column's place in the file
    records = []
    seen = {}
    for line, row in raw_rows:
        n = len(row)
        if n > len(header):
            raise SpecDataError(rel, line, None, f"is not valid CSV: expected {len(header)} fields, saw {n}")
        # A short row reads its missing trailing cells as empty, as pandas did.
        rec = {name: parse_cell(c, row[i] if i < n else "", rel, line) for name, c, i in cells}
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
            if rec.get("price_sub_month") is not None and not rec.get("price_sub_date"):
                raise SpecDataError(rel, line, "price_sub_date", "is required when price_sub_month is given")
        records.append(rec)
    return records


def load_table(path: str, kind: str):
    """One spec CSV as a pandas DataFrame (imports pandas: not for start-up paths)."""
    import pandas as pd  # lazy: keeps pandas off the CLI's and the app's start

    df = pd.DataFrame.from_records(load_rows(path, kind), columns=[c.name for c in FILES[kind]])
    df.attrs["path"] = _rel_path(path)
    return df


def _column_kind(values: list) -> str:
    """How a pandas column of these values would be typed: "float" for numbers with an empty
    cell or a fraction among them, "int" for whole numbers only, else "object"."""
    present = [v for v in values if v is not None]
    if not present or any(isinstance(v, (bool, str)) or not isinstance(v, (int, float)) for v in present):
        return "object"
    if len(present) < len(values) or any(isinstance(v, float) for v in present):
        return "float"
    return "int"


class SpecDB:
    """GPUs, instances, fabrics and model presets, shipped rows plus the user's rows.

    ``records[kind]`` holds the rows (dicts of typed values, plus ``origin``: "shipped",
    "user" or "user price"); ``gpus``, ``instances``, ``fabrics``, ``models`` and ``tables``
    are the same rows as pandas DataFrames, built (and pandas imported) on first use.
    """

    def __init__(self, data_dir: str | None = None, user_db=None):
        self.data_dir = data_dir or spec_data_dir()
        self.paths = {k: _rel_path(os.path.join(self.data_dir, f"{k}.csv")) for k in FILES}
        self.records: dict[str, list[dict]] = {}
        for kind in FILES:
            rows = load_rows(os.path.join(self.data_dir, f"{kind}.csv"), kind)
            for r in rows:
                r["origin"] = "shipped"
            self.records[kind] = rows
        self.user_db = user_db
        self.user_problems: list[str] = []  # user rows skipped, one line each (database and row)
        if user_db is not None:
            self._merge_user_rows()
        self._check_references()
        self._by_id = {k: {r["id"]: r for r in self.records[k]} for k in ("gpus", "fabrics", "models")}
        self._index = {k: self._build_index(k) for k in ("gpus", "fabrics", "models")}
        self._frames: dict = {}

    # ---- tables -------------------------------------------------------------------------
    def columns(self, kind: str) -> list[str]:
        return [c.name for c in FILES[kind]] + ["origin"]

    def row(self, kind: str, row_id: str) -> dict | None:
        """The row of a GPU, fabric or model by its exact id, or None."""
        return self._by_id[kind].get(row_id)

    def records_as_printed(self, kind: str) -> list[dict]:
        """Copies of the rows with each column typed as a whole, as when the tables were
        DataFrames: a whole-number column with an empty cell holds floats (``16.0``). The
        ``specs`` output and the Specs page keep printing what they printed before."""
        rows = self.records[kind]
        out = [dict(r) for r in rows]
        for col in self.columns(kind):
            if _column_kind([r.get(col) for r in rows]) == "float":
                for r in out:
                    if r.get(col) is not None:
                        r[col] = float(r[col])
        return out

    def frame(self, kind: str):
        """The rows as a pandas DataFrame (imports pandas on first use)."""
        if kind not in self._frames:
            import pandas as pd  # lazy: keeps pandas off the CLI's and the app's start

            df = pd.DataFrame.from_records(self.records[kind], columns=self.columns(kind))
            df.attrs["path"] = self.paths[kind]
            self._frames[kind] = df
        return self._frames[kind]

    @property
    def tables(self) -> dict:
        return {k: self.frame(k) for k in FILES}

    @property
    def gpus(self):
        return self.frame("gpus")

    @property
    def instances(self):
        return self.frame("instances")

    @property
    def fabrics(self):
        return self.frame("fabrics")

    @property
    def models(self):
        return self.frame("models")

    def _merge_user_rows(self):
        """The user's rows over the shipped ones (the last row of a key wins). A user row that
        does not match the catalog (an instance of an unknown GPU or fabric) is skipped and
        flagged in ``user_problems`` with the database and the row, never fatal: the shipped
        row of the same key, if any, stays."""
        udb = self.user_db
        for kind in ("gpus", "fabrics", "models", "instances"):  # instances refer to GPUs and fabrics
            rows = udb.rows(kind)
            if not rows:
                continue
            if kind == "instances":
                rows = [r for r in rows if self._user_instance_ok(r)]
            names = [c.name for c in FILES[kind]]
            user = [{**{n: r.get(n) for n in names}, "origin": "user"} for r in rows]
            keys = KEY_COLUMNS[kind]
            merged = self.records[kind] + user
            # The last row of each key wins and keeps its own place (pandas' drop_duplicates(keep="last")).
            last = {tuple(r[k] for k in keys): i for i, r in enumerate(merged)}
            self.records[kind] = [r for i, r in enumerate(merged) if last[tuple(r[k] for k in keys)] == i]
        for o in udb.price_overrides():
            for r in self.records["instances"]:
                if (r["provider"], r["region"], r["instance_id"]) != (o["provider"], o["region"], o["instance_id"]):
                    continue
                for col in PRICE_OVERRIDE_COLUMNS:
                    if o.get(col) not in (None, ""):
                        r[col] = o[col]
                r["origin"] = "user price"
        self.user_problems += [p for p in udb.problems if p not in self.user_problems]

    def _user_instance_ok(self, row: dict) -> bool:
        gpu_ids = {r["id"] for r in self.records["gpus"]}
        fabric_ids = {r["id"] for r in self.records["fabrics"]}
        bad = [("gpu_id", "GPU")] if row["gpu_id"] not in gpu_ids else []
        bad += [(col, "fabric") for col in ("fabric_id", "intra_node_link") if row[col] and row[col] not in fabric_ids]
        for col, what in bad:
            key = f"{row['provider']}:{row['region']}:{row['instance_id']}"
            self.user_problems.append(f"{self.user_db.path}: your instance {key!r}: {col} {row[col]!r} is not a "
                                      f"{what} id of the catalog; it is kept in the database and skipped")
        return not bad

    def _check_references(self):
        gpu_ids = {r["id"] for r in self.records["gpus"]}
        fabric_ids = {r["id"] for r in self.records["fabrics"]}
        path = self.paths["instances"]
        for i, row in enumerate(self.records["instances"]):
            if row["gpu_id"] not in gpu_ids:
                raise SpecDataError(path, i + 2, "gpu_id", f"{row['gpu_id']!r} is not a GPU id in gpus.csv")
            for col in ("fabric_id", "intra_node_link"):
                if row[col] and row[col] not in fabric_ids:
                    raise SpecDataError(path, i + 2, col, f"{row[col]!r} is not a fabric id in fabrics.csv")

    def _build_index(self, kind: str) -> dict:
        idx = {}
        for row in self.records[kind]:
            names = [row["id"], row["name"]] + [a for a in (row.get("aliases") or "").split(";") if a.strip()]
            for n in names:
                idx.setdefault(normalise(n), row["id"])
        return idx

    # ---- lookups ------------------------------------------------------------------------
    def _find(self, kind: str, name: str, field: str) -> dict:
        return self._by_id[kind][best_match(name, self._index[kind], field, kind)]

    def gpu(self, name: str) -> GpuSpec:
        """A GPU by id, name or alias, tolerant of case and spacing ("h100 sxm", "H100-SXM5-80GB")."""
        return gpu_from_row(self._find("gpus", name, "gpu"))

    def fabric(self, fabric_id: str) -> FabricSpec:
        row = self._by_id["fabrics"].get(fabric_id.strip().lower())
        if row is None:
            inter = ", ".join(r["id"] for r in self.records["fabrics"] if r["scope"] == "inter")
            raise InputError("fabric", f"unknown fabric {fabric_id!r}; allowed: {inter}")
        return fabric_from_row(row)

    def intra_link(self, g: GpuSpec) -> FabricSpec | None:
        """The link inside a node of ``g``'s GPUs: its NVLink generation (the reduced one of the
        A800/H800), Infinity Fabric, Gaudi's RoCE, else its PCIe generation; None if none is known."""
        link = (g.link or "").lower()
        try:
            if "nvlink 5" in link:
                return self.fabric("nvlink5")
            if "nvlink 4" in link and "bridge" not in link:
                return self.fabric("nvlink-h800" if "reduced" in link else "nvlink4")
            if "nvlink 3" in link and "bridge" not in link:
                return self.fabric("nvlink-a800" if "reduced" in link else "nvlink3")
            if "nvlink 2" in link:
                return self.fabric("nvlink2")
            if "infinity" in link and "bridge" not in link:
                return self.fabric("infinity-fabric")
            if "roce" in link:
                return self.fabric("gaudi-roce")
            return self.fabric({3: "pcie3", 4: "pcie4", 5: "pcie5"}.get(g.pcie_gen, "pcie4"))
        except InputError:
            return None

    def instance(self, instance_id: str) -> InstanceSpec:
        """An instance by its id (``p5.48xlarge``) or ``provider:region:id`` when ambiguous."""
        rows = self.records["instances"]
        want = instance_id.strip()
        if want.count(":") == 2:
            p, r, i = want.split(":")
            found = [x for x in rows if x["provider"].lower() == p.lower() and x["region"] == r and x["instance_id"] == i]
        else:
            found = [x for x in rows if x["instance_id"].lower() == want.lower()]
        if not found:
            found = [x for x in rows if normalise(x["instance_id"]) == normalise(want)]
        if not found:
            near = [x["instance_id"] for x in rows if normalise(want)[:4] in normalise(x["instance_id"])][:6]
            hint = f"; similar: {', '.join(near)}" if near else "; see `gpu-planner specs instances`"
            raise InputError("instance", f"unknown instance {instance_id!r}{hint}")
        return instance_from_row(found[0])

    def model(self, name: str) -> ModelSpec:
        return model_from_row(self._find("models", name, "model"))

    def model_ids(self) -> list[str]:
        return [r["id"] for r in self.records["models"]]


def _f(v, default=0.0) -> float:
    return default if v is None or (isinstance(v, float) and v != v) else float(v)


def gpu_from_row(r) -> GpuSpec:
    return GpuSpec(id=r["id"], name=r["name"], vendor=r["vendor"], memory_gb=_f(r["memory_gb"]),
                   mem_bw_gb_s=_f(r["mem_bw_gb_s"]), fp64_tflops=_f(r["fp64_tflops"]),
                   fp32_tflops=_f(r["fp32_tflops"]), tf32_tflops=_f(r["tf32_tflops"]),
                   bf16_tflops=_f(r["bf16_tflops"]), fp16_tflops=_f(r["fp16_tflops"]),
                   fp8_tflops=_f(r["fp8_tflops"]), int8_tops=_f(r["int8_tops"]), tdp_w=_f(r["tdp_w"]),
                   link=r["link"], link_bw_gb_s=_f(r["link_bw_gb_s"]), pcie_gen=int(_f(r["pcie_gen"], 4)),
                   pcie_lanes=int(_f(r["pcie_lanes"], 16)), arch=r.get("arch") or "",  # rows saved before it: ""
                   source=r["source_url"], retrieved=r["retrieved"])


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
                        network_gbit_s=_f(r["network_gbit_s"]), network=r["fabric"] or "unknown", fabric_id=r["fabric_id"] or "",
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
