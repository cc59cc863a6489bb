"""The report's Serving section (issue 15): the scenario's serve section on each plan's machine,
as ``service/serving_plans.py`` computed it (the numbers of ``gpu-planner serve --json``); this
module only lays them out, for ``html.py``'s document (both targets)."""
from __future__ import annotations

from planner_app.report import text as fmt
from planner_app.service.pricing import STALE_AFTER_DAYS

# the serve JSON's memory breakdown (service/serving.py) in the order the table shows it
MEMORY_LABELS = (("weights", "Model weights"), ("kv_pool", "KV cache pool"),
                 ("activation_workspace", "Activation workspace"),
                 ("cuda_graphs", "CUDA graphs"), ("other", "Other (context, NCCL)"))
# serve's step_breakdown_ms (core/serving.STEP_PARTS), as the report names them
STEP_LABELS = (("dense_gemm", "GEMMs"), ("expert_gemm", "Expert GEMMs"), ("attention", "Attention (KV cache)"),
               ("communication", "Collectives"), ("elementwise", "Element-wise"),
               ("kernel_floor", "Kernel launches"), ("engine_overhead", "Engine CPU"),
               ("host_wait", "Waiting for the host"))


def ms(v) -> str:
    """A latency as the serve command prints it; None is a queue that grows without bound."""
    return "∞" if v is None else f"{v:,.1f} ms"


def _name(doc, d: dict) -> str:
    return doc.e(d["name"] if d["name"] is not None else doc.s("Serve page deployment"))


def _hardware(d: dict) -> str:
    hw = d["hardware"].get("instance") or d["hardware"].get("gpu") or "-"
    gpu = (d.get("serve") or {}).get("gpu")
    return f"{hw} ({gpu})" if gpu and gpu != hw else hw


def _yes_no(doc, v, good: bool = True) -> str:
    """yes/no, the unwanted answer in red; '-' for None."""
    if v is None:
        return "-"
    word = doc.e(doc.s("yes") if v else doc.s("no"))
    return word if bool(v) == good else f'<b style="color:#B22222">{word}</b>'


def _price(doc, d: dict) -> str:
    p = d.get("price")
    if p is None:
        return doc.e(doc.s("no price (bare GPU)"))
    if not ((d.get("serve") or {}).get("cost") or {}).get("usd_per_million_output_tokens"):
        return doc.e(doc.s("the provider publishes no price"))
    age = "" if p["age_days"] is None else " " + doc.s.f("({n} days old)", n=f"{p['age_days']:,}")
    return doc.e(f"{p['currency']} {p['date'] or '?'}{age}" + (" ¥→$" if p["converted"] else ""))


def _summary(doc, sv: dict) -> str:
    s, o, t = doc.s, sv["options"], sv["targets"]
    load = (s.f("{n} concurrent requests", n=f"{o['concurrency']:,}") if o.get("concurrency") is not None
            else s.f("{r} requests/s arriving", r=f"{o['request_rate']:g}"))
    first = next((d["serve"] for d in sv["deployments"] if d["serve"]), None)
    dep = first["deployment"] if first else {}
    text = s.f("{model} served by {engine} at steady state: {load}, {isl} input and {osl} output tokens per request; "
               "tp {tp} × pp {pp}, {replicas} replica(s), {wd} weights, {kd} KV cache.",
               model=first["model"] if first else "-", engine=first["engine"] if first else o.get("engine", "vllm"),
               load=load, isl=f"{o['isl']:,}", osl=f"{o['osl']:,}", tp=o.get("tp", 1), pp=o.get("pp", 1),
               replicas=o.get("replicas", 1), wd=dep.get("weights_dtype", o.get("weights_dtype", "bf16")),
               kd=dep.get("kv_dtype", o.get("kv_dtype", "bf16")))
    goals = [f"{name} ≤ {t[key]:g} ms" for key, name in (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT"))
             if t.get(key) is not None]
    text += " " + (s.f("Targets: {goals}.", goals=", ".join(goals)) if goals else s("No latency targets set."))
    return text


def section(doc) -> None:
    """Append the Serving section to ``doc`` (html._Doc) when the report has one."""
    r, s = doc.r, doc.s
    sv = r.serving
    if sv is None:
        return
    doc.h2("Serving", new_page=doc.target == "pdf")
    doc.p(doc.e(_summary(doc, sv)))
    deps = sv["deployments"]
    ok = [d for d in deps if d["serve"]]
    t = sv["targets"]

    def row(label: str, cell) -> list[str]:  # label: already in the report's language
        return [doc.e(label)] + [cell(d) if d["serve"] else "-" for d in deps]

    def num(key: str, f):
        return lambda d: f(d["serve"][key])

    def slo(key: str):
        return lambda d: _yes_no(doc, d["slo"][key])

    rows = [[doc.e(s("Hardware"))] + [doc.e(_hardware(d)) for d in deps],
            row(s("GPUs"), lambda d: fmt.count(d["serve"]["deployment"]["gpus"])),
            row(s("Fits"), lambda d: _yes_no(doc, d["serve"]["fits"])),
            row(s("TTFT"), num("ttft_ms", ms)),
            # the mean a closed-loop benchmark reports, its clients starting together (serve's benchmark)
            row(s("Mean TTFT in a benchmark run"),
                lambda d: doc.e(s.f("{ttft} ({n} requests)", ttft=ms(d["serve"]["benchmark"]["mean_ttft_ms"]),
                                    n=fmt.count(d["serve"]["benchmark"]["requests"])))
                if d["serve"].get("benchmark") else "-"),
            row(s("TPOT"), num("tpot_ms", ms)),
            row(s("Tokens/s per user"), num("tokens_per_s_per_user", lambda v: f"{v:,.1f}")),
            row(s("Output tokens/s per GPU"), num("output_tokens_per_s_per_gpu", fmt.rate)),
            row(s("Output tokens/s"), num("output_tokens_per_s", fmt.rate)),
            row(s("Requests/s"), num("requests_per_s", lambda v: f"{v:,.2f}")),
            row(s("Max concurrency"), num("max_concurrency", fmt.count)),
            row(s("Saturated (requests queue)"), lambda d: _yes_no(doc, d["serve"]["saturated"], good=False))]
    if t.get("ttft_ms") is not None:
        rows.append(row(s.f("TTFT ≤ {x} ms met", x=f"{t['ttft_ms']:g}"), slo("ttft_met")))
    if t.get("tpot_ms") is not None:
        rows.append(row(s.f("TPOT ≤ {x} ms met", x=f"{t['tpot_ms']:g}"), slo("tpot_met")))
    rows += [row(s("USD per million output tokens"),
                 lambda d: fmt.usd_per_m((d["serve"].get("cost") or {}).get("usd_per_million_output_tokens"))),
             row(s("Price basis"), lambda d: s(fmt.PRICE_LABELS[b]) if (b := (d["serve"].get("cost") or {}).get(
                 "price_basis")) else "—"),
             row(s("USD per hour"), lambda d: fmt.usd((d["serve"].get("cost") or {}).get("usd_per_hour"))),
             [doc.e(s("Prices dated"))] + [_price(doc, d) for d in deps]]
    for d in deps:
        if d["error"]:
            rows.append([f"{_name(doc, d)}: {doc.err(d['error'])}"])
    n = len(deps)
    first = 26 if n <= 3 else 20
    widths = [first] + [(100 - first) // max(n, 1)] * n
    doc.table([s("Deployment")] + [_name(doc, d) for d in deps], rows, align=["left"] + ["right"] * n,
              widths=widths, small=n > 3)
    verdict = _verdict(doc, sv, ok)
    if verdict:
        doc.p(doc.e(verdict))
    _memory(doc, ok)
    _step_time(doc, ok)
    _notes(doc, sv, ok)


def _verdict(doc, sv: dict, ok: list[dict]) -> str:
    """Which deployments meet the targets, and the cheapest of them per million output tokens."""
    s = doc.s
    if not ok or all(d["slo"]["met"] is None for d in ok):
        return ""
    meet = [d for d in ok if d["slo"]["met"]]
    if not meet:
        return s("No deployment meets the targets.")
    names = [d["name"] if d["name"] is not None else s("Serve page deployment") for d in meet]
    text = s.f("Meets the targets: {names}.", names=", ".join(names))
    # the cheapest compares like with like: on-demand prices (a spot-only instance is not "cheaper")
    priced = [d for d in meet if (d["serve"].get("cost") or {}).get("usd_per_million_output_tokens") is not None
              and d["serve"]["cost"].get("price_basis") == "on_demand"]
    if priced:
        best = min(priced, key=lambda d: d["serve"]["cost"]["usd_per_million_output_tokens"])
        text += " " + s.f("Cheapest of them: {name}, {usd} per million output tokens.",
                          name=best["name"] if best["name"] is not None else s("Serve page deployment"),
                          usd=fmt.usd_per_m(best["serve"]["cost"]["usd_per_million_output_tokens"]))
    return text


def _memory(doc, ok: list[dict]) -> None:
    s = doc.s
    if not ok:
        return
    doc.parts.append(f'<h3>{doc.e(s("Serving memory per GPU"))}</h3>')
    rows = []
    for d in ok:
        m = d["serve"]["memory"]
        rows.append([_name(doc, d)] + [fmt.gb(m["breakdown"][k]) for k, _l in MEMORY_LABELS]
                    + [fmt.gb(m["device_bytes"]), fmt.gb(m["capacity_bytes"]),
                       fmt.count(d["serve"]["kv_cache_tokens"])])
    doc.table([s("Deployment")] + [s(label) for _k, label in MEMORY_LABELS]
              + [s("Total"), s("Capacity"), s("KV cache tokens per replica")], rows,
              align=["left"] + ["right"] * 8, widths=[16, 10, 11, 11, 11, 10, 10, 10, 11], small=True)


def _step_time(doc, ok: list[dict]) -> None:
    """Where each deployment's time per output token goes (an average engine step; the parts sum to
    TPOT); parts that are zero for every deployment are left out."""
    s = doc.s
    if not ok:
        return
    keys = [(k, label) for k, label in STEP_LABELS if any(d["serve"]["step_breakdown_ms"][k] > 0 for d in ok)]
    doc.parts.append(f'<h3>{doc.e(s("Time per output token by part (ms)"))}</h3>')
    rows = [[_name(doc, d)] + [f"{d['serve']['step_breakdown_ms'][k]:,.2f}" for k, _l in keys]
            + [ms(d["serve"]["tpot_ms"])] for d in ok]
    first = 14
    widths = [first] + [(100 - first) // (len(keys) + 1)] * (len(keys) + 1)
    doc.table([s("Deployment")] + [s(label) for _k, label in keys] + [s("TPOT")], rows,
              align=["left"] + ["right"] * (len(keys) + 1), widths=widths, small=True)


def _notes(doc, sv: dict, ok: list[dict]) -> None:
    s = doc.s
    doc.note(s("Each column is gpu-planner serve with the scenario's serve section on that plan's machine; cost "
               "per million output tokens is the on-demand hourly price of the instances one deployment needs "
               "divided by its output tokens/s, running all the time; '∞': requests queue without bound."))
    # the price notes the cost section has made already are not repeated (doc.note says each once)
    rates = sorted({(d["price"]["cny_per_usd"], d["price"]["rate_given"]) for d in ok
                    if d["price"] and d["price"]["converted"]})
    for rate, given in rates:
        how = s("set in the scenario") if given else s("the built-in default, not a dated market rate")
        doc.note(s.f("¥→$: the provider quotes this price in CNY; converted to USD at {rate} CNY per USD ({how}).",
                     rate=f"{rate:.2f}", how=how))
    stale = [d for d in ok if d["price"] and d["price"]["stale"]]
    if stale:
        names = ", ".join(d["name"] if d["name"] is not None else s("Serve page deployment") for d in stale)
        doc.note(s.f("Prices more than {days} days old may be stale: {plans}.", days=STALE_AFTER_DAYS, plans=names))
