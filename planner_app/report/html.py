"""The report as HTML. One layout serves two targets: ``target="html"`` is a
self-contained page for a browser (charts inline as SVG, a style sheet); ``target="pdf"``
is the subset Qt's QTextDocument understands (charts as placeholders that ``pdf.py``
replaces with vector drawings)."""
from __future__ import annotations

from html import escape

from planner_app.core import options
from planner_app.core.plans.cost import PRICE_KINDS, cny_rate
from planner_app.core.plans.scaling import LATENCY_ADDED_S
from planner_app.report import charts, serving
from planner_app.report import text as fmt
from planner_app.report.svg import FONT_STACK, to_svg
from planner_app.report.text import Strings
from planner_app.scenario import ESTIMATE_OPTIONS
from planner_app.service.pricing import STALE_AFTER_DAYS, PriceSource


def _price_source(plan) -> PriceSource | None:
    """The plan's price currency, date and the exchange rate its USD figures used."""
    inst = plan.instance or {}
    if not inst.get("currency"):
        return None
    rate = plan.options.get("cny_per_usd")
    return PriceSource(inst["currency"], inst.get("price_date") or "", cny_rate(rate), bool(rate))

ACCENT = charts.ACCENT
ZWSP = "\u200b"

# Names of the estimate's JSON fields that engine sentences use (what `--json` prints), as the
# report's tables call them: a reader of the report sees the column, not the key.
INTERNAL_KEYS = {"memory.peak_bytes": "the peak allocated memory"}

# Why the report recommends its plan (model.recommend): the rule, then the branch that chose
RULE_TEXT = {
    "training": "Recommendation rule: of the plans that fit in GPU memory, the cheapest at the on-demand price; "
                "when none of them has an on-demand price, the fastest.",
    "inference": "Recommendation rule: of the plans that fit in GPU memory, the cheapest per million tokens at the "
                 "on-demand price; when none of them has an on-demand price, the fastest.",
    "target": "Recommendation rule: of the plans that fit in GPU memory and reach the target tokens/s (all that "
              "fit when none reaches it), the cheapest per million tokens at the on-demand price; when none of "
              "them has an on-demand price, the fastest.",
}

# The inputs tables: the options of the estimate requests (core/requests.py) in their order and
# names, each with its formatter: the workload's, then the scenario's own target; and each plan's
# options beside its hardware (its layout, network, host side, speed overrides).
_INPUT_FORMATS = {"tokens": fmt.tokens, "target_tokens_per_s": fmt.rate}


def _format_of(o):
    return _INPUT_FORMATS.get(o.key, fmt.count if o.kind == "int" else str)


WORKLOAD_LABELS = tuple((o.key, o.label, _format_of(o)) for o in ESTIMATE_OPTIONS.values()
                        if o.scope == "workload" and o.kind != "model") + (
    ("target_tokens_per_s", "Target generated tokens/s", fmt.rate),)
PLAN_LABELS = tuple((o.key, o.label, _format_of(o)) for o in ESTIMATE_OPTIONS.values()
                    if o.scope == "plan" and o.key not in ("gpu", "instance"))


# The input pipeline's verdicts as the report words them (service/host.py keys)
INPUT_VERDICTS = {"fed": "fed", "cpu-bound": "CPU-bound", "storage-bound": "storage-bound",
                  "unknown": "unknown (no instance)"}

class _Doc:
    def __init__(self, report, target: str, chart_html):
        self.r = report
        self.s = Strings(report.lang)
        self.target = target
        self.chart_html = chart_html
        self.parts: list[str] = []
        self.majors: list[int] = []  # ordinals of the h2 headings that open a major section (pdf.py)
        self._h2 = 0
        self._notes: set[str] = set()

    # -- helpers --
    def e(self, text) -> str:
        return escape(str(text))

    def h2(self, text: str, new_page: bool = False):
        """A section heading; ``new_page``: a major section, which pdf.py starts on a new page
        unless most of the page is still free (never a page of a few lines)."""
        if new_page:
            self.majors.append(self._h2)
        self._h2 += 1
        self.parts.append(f'<h2>{self.e(self.s(text))}</h2>')

    def p(self, html: str, cls: str = ""):
        self.parts.append(f'<p{f" class={cls!r}" if cls else ""}>{html}</p>')

    def note(self, text: str):
        """A small note (plain text), once: a later section's same note is not repeated."""
        if text not in self._notes:
            self._notes.add(text)
            self.p(self.e(text), "small")

    def table(self, header: list[str], rows: list[list[str]], align: list[str] | None = None,
              widths: list[int] | None = None, small: bool = False):
        """``rows`` hold HTML; a row of one cell spans the table."""
        align = align or ["left"] * len(header)
        cls = "grid small" if small else "grid"
        out = [f'<table class="{cls}" width="100%" cellspacing="0" cellpadding="3" border="1">',
               "<thead><tr>"]
        for i, h in enumerate(header):
            w = f' width="{widths[i]}%"' if widths else ""
            out.append(f'<th align="{align[i]}"{w} bgcolor="#E8EEF5">{self.e(h)}</th>')
        out.append("</tr></thead><tbody>")
        for row in rows:
            out.append("<tr>")
            if len(row) == 1:
                out.append(f'<td colspan="{len(header)}">{row[0]}</td>')
            else:
                out += [f'<td align="{align[i]}">{c}</td>' for i, c in enumerate(row)]
            out.append("</tr>")
        out.append("</tbody></table>")
        self.parts.append("".join(out))

    def url(self, u: str) -> str:
        if not u:
            return "-"
        shown = self.e(u)
        if self.target == "pdf":  # let long addresses wrap in narrow cells
            shown = shown.replace("/", "/" + ZWSP).replace("?", ZWSP + "?")
        return f'<a href="{self.e(u)}">{shown}</a>'

    def err(self, text: str) -> str:
        return f'<span class="err" style="color:#B22222">{self.e(self.s("Estimate failed:"))} {self.e(text)}</span>'

    # -- sections --
    def title_block(self):
        r, s = self.r, self.s
        self.parts.append(f'<p class="kicker" style="color:#666666">{self.e(s("GPU sizing report"))}</p>')
        self.parts.append(f'<h1>{self.e(r.title)}</h1>')
        sd = r.spec_data
        names = {"gpus": "GPUs", "instances": "instances", "fabrics": "fabrics", "models": "model presets"}
        rows_text = ", ".join(f"{n} {s(names[k])}" for k, n in sd.get("rows", {}).items() if k in names)
        spec = s.f("retrieved {first} to {last}; {rows}", first=sd.get("retrieved_earliest") or "-",
                   last=sd.get("retrieved_latest") or "-", rows=rows_text)
        if sd.get("user_rows"):
            spec += "; " + s.f("{n} rows from your own database", n=sd["user_rows"])
        meta = [(s("Project"), r.project or "-"), (s("Author"), r.author or "-"), (s("Date"), r.created),
                (s("App version"), f"gpu-planner {r.app_version} ({s('engine')} {r.engine_version})"),
                (s("Spec data"), spec)]
        out = ['<table class="meta" cellspacing="0" cellpadding="2" border="0" width="100%">']
        for k, v in meta:
            out.append(f'<tr><td width="18%" style="color:#666666">{self.e(k)}</td><td>{self.e(v)}</td></tr>')
        out.append("</table>")
        self.parts.append("".join(out))

    def recommendation(self):
        r, s = self.r, self.s
        self.h2("Recommendation")
        p = r.recommended_plan
        if r.rule.get("rule") == "none_fits":
            self.p(self.e(s.f("None of the {total} plans fits in GPU memory, so none is recommended; shown: {plan}, "
                              "the plan open in the planner.", total=len(r.plans), plan=p.name)), "lead")
        if not p.ok:
            self.p(self.e(s.f("The chosen plan, {plan}, could not be estimated:", plan=p.name)) + " "
                   + f'<span style="color:#B22222">{self.e(p.error)}</span>')
            return
        est = p.estimate
        hw = f"{est['parallel']['gpus']} × {est['gpu']['name']}"
        if p.instance:
            hw += f" ({p.instance['provider']} {p.instance['id']})"
        if r.mode == "training":
            t, c = est["time"], est.get("cost", {})
            text = s.f("{plan}: {hw} on {nodes} node(s).", plan=p.name, hw=hw, nodes=est["parallel"].get("nodes", 1))
            if t.get("train_s") is not None:
                text += " " + s.f("It trains {model} ({params} parameters) on {tokens} tokens in {time} at "
                                  "{tps} tokens/s (MFU {mfu}), {gpuh} GPU-hours.",
                                  model=est["model"]["name"], params=fmt.params(est["params"]["total"]),
                                  tokens=fmt.tokens(est["setup"]["tokens"]), time=fmt.duration(t["train_s"], s),
                                  tps=fmt.rate(t["tokens_per_s"]), mfu=fmt.pct(t["mfu"]),
                                  gpuh=fmt.gpu_hours(c.get("gpu_hours")))
            else:
                text += " " + s.f("One step takes {step} at {tps} tokens/s (MFU {mfu}).",
                                  step=fmt.duration(t["step_s"], s), tps=fmt.rate(t["tokens_per_s"]), mfu=fmt.pct(t["mfu"]))
            prices = [(k, v) for k, v in p.cost_by_price.items() if v is not None]
            if prices:
                text += " " + s("Cost:") + " " + ", ".join(f"{fmt.usd(v)} {s(fmt.PRICE_LABELS[k]).lower()}"
                                                          for k, v in prices) + "."
                if c.get("usd_mix") is not None:
                    text += " " + s.f("At the blended price ({mix}): {usd}.", mix=self._mix(c.get("mix")),
                                      usd=fmt.usd(c["usd_mix"]))
            elif "train_s" in t:
                text += " " + s("No price is known for a bare GPU; choose a cloud instance to see costs.")
        else:
            t, c = est["time"], est.get("cost", {})
            text = s.f("{plan}: {hw} serves {model} at {tps} generated tokens/s for {batch} concurrent sequences "
                       "({per_user} tokens/s per user); prefill of a {prompt}-token prompt takes {prefill}.",
                       plan=p.name, hw=hw, model=est["model"]["name"], tps=fmt.rate(t["decode_tokens_per_s"]),
                       batch=est["setup"]["batch"], per_user=fmt.rate(t["decode_tokens_per_s_per_user"]),
                       prompt=est["setup"]["prompt_len"], prefill=fmt.duration(t["prefill_s"], s))
            if r.target_tokens_per_s:
                key = ("This meets the target of {target} tokens/s." if t["decode_tokens_per_s"] >= r.target_tokens_per_s
                       else "This falls short of the target of {target} tokens/s.")
                text += " " + s.f(key, target=fmt.rate(r.target_tokens_per_s))
            if c.get("usd_per_million_tokens") is not None:
                text += " " + s.f("Cost: {usd} per million generated tokens at the {basis} price ({hour} per hour).",
                                  usd=fmt.usd_per_m(c["usd_per_million_tokens"]), hour=fmt.usd(c.get("usd_per_hour")),
                                  basis=s(fmt.PRICE_LABELS[c.get("usd_price_basis") or "on_demand"]).lower())
        m = est["memory"]
        text += " " + s.f("Memory per GPU: {need} of {cap} ({verdict}).", need=fmt.gb(m.get("device_bytes")),
                          cap=fmt.gb(m["capacity_bytes"]), verdict=s("fits") if m["fits"] else s("does not fit"))
        self.p(self.e(text), "lead")
        why = self._why()
        if why:
            self.p(self.e(why))
        others = [q for q in r.plans if q.ok and q.index != p.index]
        if others:
            self.p(self.e(self._comparison()))
        if est.get("advice", {}).get("text"):
            self.p(f'<i>{self.e(s("Engine advice:"))}</i> {self.e(s.engine(est["advice"]["text"]))}', "small")

    def _why(self) -> str:
        """The recommendation rule and the branch of it that chose the plan."""
        r, s = self.r, self.s
        rule = r.rule.get("rule")
        if rule not in ("cheapest_on_demand", "fastest"):
            return ""
        kind = "training" if r.mode == "training" else "target" if r.target_tokens_per_s else "inference"
        out = s(RULE_TEXT[kind])
        if r.rule.get("target_met") is False:
            out += " " + s.f("No plan that fits reaches the target of {target} tokens/s.",
                             target=fmt.rate(r.target_tokens_per_s))
        n, total, plan = r.rule["candidates"], r.rule["total"], r.recommended_plan.name
        if rule == "cheapest_on_demand":
            out += " " + s.f("{plan} is the cheapest of the {n} of {total} plans that qualify.", plan=plan, n=n,
                             total=total)
        else:
            out += " " + s.f("{plan} is the fastest of the {n} of {total} plans that qualify; none of them has an "
                             "on-demand price.", plan=plan, n=n, total=total)
        return out

    def _mix(self, mix) -> str:
        if not mix:
            return "-"
        return " + ".join(f"{v * 100:.0f}% {self.s(fmt.PRICE_LABELS[k]).lower()}" for k, v in mix.items() if v)

    def _comparison(self) -> str:
        r, s = self.r, self.s
        ok = [q for q in r.plans if q.ok]
        if r.mode == "training":
            timed = [q for q in ok if q.estimate["time"].get("train_s") is not None]
            parts = []
            if timed:
                f = min(timed, key=lambda q: q.estimate["time"]["train_s"])
                parts.append(s.f("fastest: {plan} ({time})", plan=f.name, time=fmt.duration(f.estimate["time"]["train_s"], s)))
            priced = [q for q in ok if q.cost_by_price.get("on_demand") is not None]
            if priced:
                c = min(priced, key=lambda q: q.cost_by_price["on_demand"])
                parts.append(s.f("cheapest on demand: {plan} ({usd})", plan=c.name, usd=fmt.usd(c.cost_by_price["on_demand"])))
        else:
            f = max(ok, key=lambda q: q.estimate["time"]["decode_tokens_per_s"])
            parts = [s.f("fastest: {plan} ({tps} tokens/s)", plan=f.name, tps=fmt.rate(f.estimate["time"]["decode_tokens_per_s"]))]
            priced = [q for q in ok if q.cost_by_price.get("on_demand") is not None]
            if priced:
                c = min(priced, key=lambda q: q.cost_by_price["on_demand"])
                parts.append(s.f("cheapest per million tokens: {plan} ({usd})", plan=c.name,
                                 usd=fmt.usd_per_m(c.cost_by_price["on_demand"])))
        failed = len(r.plans) - len(ok)
        out = s.f("Across the {n} compared plans", n=len(r.plans)) + ": " + "; ".join(parts) + "."
        if failed:
            out += " " + s.f("{n} plan(s) could not be estimated.", n=failed)
        return out

    def inputs(self):
        r, s = self.r, self.s
        self.h2("Inputs")
        chosen = r.recommended_plan
        if chosen.ok:
            self.p(self.e(s.engine(chosen.estimate["model"]["summary"])), "small")
        items = [(s.option(label), self._value(r.workload[k], f, k)) for k, label, f in WORKLOAD_LABELS
                 if r.workload.get(k) not in (None, "")]
        rows = []
        for i in range(0, len(items), 2):
            pair = items[i:i + 2] + [("", "")] * (2 - len(items[i:i + 2]))
            rows.append([self.e(pair[0][0]), f"<b>{self.e(pair[0][1])}</b>", self.e(pair[1][0]),
                         f"<b>{self.e(pair[1][1])}</b>"])
        self.table([s("Setting"), s("Value"), s("Setting"), s("Value")], rows, widths=[28, 22, 28, 22])
        self.parts.append(f'<h3>{self.e(s("Compared plans"))}</h3>')
        rows = []
        for p in r.plans:
            o = p.options
            hw = o.get("instance") or o.get("gpu") or "-"
            name = self.e(p.name) + (f' <b>({self.e(s("recommended"))})</b>' if r.recommends(p.index) else "")
            if not p.ok:
                rows.append([name, self.e(hw), "-", "-", self.err(p.error)])
                continue
            par = p.estimate["parallel"]
            gpu = p.estimate["gpu"]["name"]
            if r.mode == "training":
                layout = (f"tp {par['tp']} × pp {par['pp']} × dp {par['dp']}"
                          + (f" × cp {par['cp']}" if par.get("cp", 1) > 1 else "")
                          + (f" × ep {par['ep']}" if par.get("ep", 1) > 1 else "") + f", ZeRO {par['zero']}")
            else:
                layout = f"tp {par['tp']}"
            net = o.get("fabric") or (p.instance and "instance network") or "default"
            rows.append([name, self.e(f"{hw} ({gpu})" if hw != gpu else gpu), self.e(par["gpus"]), self.e(layout),
                         self.e(s(net) if net in ("instance network", "default") else net)])
        self.table([s("Plan"), s("Hardware"), s("GPUs"), s("Layout"), s("Network")], rows,
                   align=["left", "left", "right", "left", "left"], widths=[26, 28, 7, 25, 14])
        # every option each plan sets, from its request (a new option of the layout shows here as it is)
        rows = []
        for p in r.plans:
            if not p.ok:
                continue
            given = options.given(p.result.request)
            items = [f"{s.option(label)} {self._value(given[k], f, k)}" for k, label, f in PLAN_LABELS if k in given]
            # a plan's own values of workload options (a plan opened from Search) are its options too
            items += [f"{s.option(label)} {self._value(p.own[k], f, k)}" for k, label, f in WORKLOAD_LABELS
                      if k in p.own]
            if items:
                rows.append([self.e(p.name), self.e("; ".join(items))])
        if rows:
            self.table([s("Plan"), s("Plan options")], rows, align=["left", "left"], widths=[26, 74], small=True)

    def _value(self, v, f, key: str = "") -> str:
        """An input's value as the reader reads it: yes/no, a number formatted, a choice by its label
        (core/options.CHOICE_LABELS, in the report's language: "无", not "none")."""
        if isinstance(v, bool):
            return self.s("yes") if v else self.s("no")
        if isinstance(v, str) and key in options.CHOICE_LABELS:
            return self.s.option(options.choice_label(key, v))
        return f(v) if isinstance(v, (int, float)) else str(v)

    def memory(self):
        r, s = self.r, self.s
        self.h2("Memory per GPU", new_page=self.target == "pdf")
        self.parts.append(self.chart_html(charts.memory_chart(r, s)))
        rows = []
        for p in r.plans:
            if not p.ok:
                rows.append([self.e(p.name), self.err(p.error)])
                continue
            m = p.estimate["memory"]
            extra = m.get("largest_micro_batch", m.get("largest_batch"))
            rows.append([self.e(p.name), fmt.gb(m["peak_bytes"]), fmt.gb(m.get("device_bytes")),
                         fmt.gb(m["capacity_bytes"]),
                         self.e(s("yes")) if m["fits"] else f'<b style="color:#B22222">{self.e(s("no"))}</b>',
                         "-" if extra is None else fmt.count(extra)])
        last = s("Largest micro-batch") if r.mode == "training" else s("Largest batch")
        self.table([s("Plan"), s("Peak allocated"), s("With runtime overhead"), s("Capacity"), s("Fits"), last], rows,
                   align=["left", "right", "right", "right", "center", "right"], widths=[30, 14, 18, 14, 8, 16],
                   small=True)

    def time_and_cost(self):
        r, s = self.r, self.s
        if r.mode == "training":
            self.h2("Time to train")
            rows = []
            for p in r.plans:
                if not p.ok:
                    rows.append([self.e(p.name), self.err(p.error)])
                    continue
                t, c = p.estimate["time"], p.estimate.get("cost", {})
                rows.append([self.e(p.name), fmt.count(p.estimate["parallel"]["gpus"]), fmt.duration(t["step_s"], s),
                             fmt.rate(t["tokens_per_s"]), fmt.pct(t["mfu"]), fmt.duration(t.get("train_s"), s),
                             fmt.gpu_hours(c.get("gpu_hours"))])
            self.table([s("Plan"), s("GPUs"), s("Step"), s("Tokens/s"), s("MFU"), s("Time to train"), s("GPU-hours")], rows,
                       align=["left"] + ["right"] * 6, widths=[31, 8, 11, 14, 9, 11, 16])
            self.h2("Cost of the training run (USD)")
            unit_note = s("Whole run at each price of the instance; '-' where the provider publishes no such price.")
        else:
            self.h2("Serving performance")
            rows = []
            target = r.target_tokens_per_s
            for p in r.plans:
                if not p.ok:
                    rows.append([self.e(p.name), self.err(p.error)])
                    continue
                t = p.estimate["time"]
                tps = t["decode_tokens_per_s"]
                vs = "-" if not target else (f'{tps / target * 100:.0f}% ' + (s("meets") if tps >= target else s("short")))
                rows.append([self.e(p.name), fmt.count(p.estimate["parallel"]["gpus"]), fmt.duration(t["prefill_s"], s),
                             fmt.rate(tps), self.e(vs), fmt.rate(t["decode_tokens_per_s_per_user"]),
                             fmt.duration(t.get("end_to_end_s"), s), fmt.duration(t.get("serving_engine_decode_s_per_token"), s)])
            tgt = s.f("vs target {t}", t=fmt.rate(target)) if target else s("vs target")
            self.table([s("Plan"), s("GPUs"), s("Prefill"), s("Decode tokens/s"), tgt, s("Per user"),
                        s("Request latency"), s("vLLM per token")], rows, align=["left"] + ["right"] * 7,
                       widths=[24, 6, 10, 15, 13, 9, 12, 11])
            self.h2("Cost per million generated tokens (USD)")
            unit_note = s("At full batch, from the instance's hourly price; '-' where the provider publishes no such price.")
        rows, converted, stale = [], set(), []
        f = fmt.usd if r.mode == "training" else fmt.usd_per_m
        for p in r.plans:
            if not p.ok:
                rows.append([self.e(p.name), self.err(p.error)])
                continue
            date = (p.instance or {}).get("price_date") or "-"
            if not any(v is not None for v in p.cost_by_price.values()):
                why = s("no price (bare GPU)") if p.instance is None else s("the provider publishes no price")
                rows.append([self.e(p.name), "-", "-", "-", "-", self.e(why)])
                continue
            src = _price_source(p)
            if src is not None and src.converted:  # the row's prices are CNY, shown converted to USD
                date += " ¥→$"
                converted.add((src.cny_per_usd, src.rate_given))
            if src is not None and src.stale():
                stale.append(p.name)
            rows.append([self.e(p.name)] + [f(p.cost_by_price.get(k)) for k in PRICE_KINDS] + [self.e(date)])
        self.table([s("Plan")] + [s(fmt.PRICE_LABELS[k]) for k in PRICE_KINDS] + [s("Prices dated")], rows,
                   align=["left"] + ["right"] * 4 + ["center"], widths=[30, 14, 14, 14, 12, 16])
        self.note(unit_note)
        for rate, given in sorted(converted):
            how = s("set in the scenario") if given else s("the built-in default, not a dated market rate")
            self.note(s.f("¥→$: the provider quotes this price in CNY; converted to USD at {rate} CNY per USD ({how}).",
                          rate=f"{rate:.2f}", how=how))
        if stale:
            self.note(s.f("Prices more than {days} days old may be stale: {plans}.", days=STALE_AFTER_DAYS,
                          plans=", ".join(stale)))

    def host_side(self):
        """Checkpoint, host RAM and input pipeline of each training plan (issue 19)."""
        r, s = self.r, self.s
        plans = [p for p in r.plans if p.ok and p.estimate.get("host")]
        if r.mode != "training" or not plans:
            return
        self.h2("Host side")
        rows = []
        for p in plans:
            h = p.estimate["host"]
            c, ram, inp = h["checkpoint"], h["ram"], h["input"]
            need = fmt.gb(ram["needed_bytes"]) + (" / " + fmt.gb(ram["ram_bytes"]) if ram["ram_bytes"] else "")
            if ram["fits"] is False:
                need = f'<b style="color:#B22222">{self.e(need)} {self.e(s("no"))}</b>'
            else:
                need = self.e(need)
            rows.append([self.e(p.name), fmt.gb(c["resumable_bytes"]), fmt.duration(c["write_s"], s),
                         fmt.pct(c["overhead_fraction"]), fmt.gb(c["disk_bytes"]), need,
                         self.e(s(INPUT_VERDICTS.get(inp["verdict"], inp["verdict"])))])
        self.table([s("Plan"), s("Checkpoint"), s("Write"), s("Overhead"), s("Disk (kept)"), s("Host RAM per node"),
                    s("Input pipeline")], rows, align=["left"] + ["right"] * 5 + ["center"],
                   widths=[24, 12, 10, 10, 12, 18, 14], small=True)
        self.p(self.e(s("Checkpoint: resumable (weights, optimizer states, RNG) as torch.save writes it, or "
                        "torch.distributed.checkpoint with one file per rank; write time at the node's storage "
                        "bandwidth; overhead = write time over the save interval.")), "small")

    def scaling(self):
        r, s = self.r, self.s
        if r.mode != "training" or r.scaling is None:
            return
        self.h2("Scaling of the recommended plan", new_page=self.target == "pdf")
        if "error" in r.scaling:
            self.p(self.e(s("The scaling curve could not be computed:")) + " " + self.e(r.scaling["error"]))
            return
        sc = r.scaling
        self.p(self.e(s.f("Strong scaling: the layout of {plan} with the data-parallel degree grown over nodes of "
                          "{n} GPUs, global batch fixed; network {fabric}. Efficiency = throughput(n) / "
                          "(n × throughput of the smallest count).", plan=r.recommended_plan.name,
                          n=sc["gpus_per_node"], fabric=sc["fabric"])), "small")
        self.parts.append(self.chart_html(charts.scaling_chart(r, s)))
        rows = []
        for pt in sc["points"]:
            mark = " ◀" if pt["nodes"] == sc["plan_nodes"] else ""
            rows.append([f'{pt["nodes"]}{mark}', fmt.count(pt["gpus"]), fmt.rate(pt["tokens_per_s"]),
                         fmt.pct(pt["efficiency"]), fmt.pct(pt["no_overlap_efficiency"]), fmt.duration(pt["step_s"], s),
                         f'{(pt["step_s_plus_50us"] / pt["step_s"] - 1) * 100:+.2f}%'])
        us = f"{LATENCY_ADDED_S * 1e6:g}"
        self.table([s("Nodes"), s("GPUs"), s("Tokens/s"), s("Efficiency"), s("No-overlap"), s("Step"),
                    s.f("Step change at +{us} µs per hop", us=us)], rows, align=["right"] * 7, small=True)
        self.note(s.f("Last column, latency sensitivity: how much longer a step takes when every step of every "
                      "inter-node collective waits {us} µs more (a slower switch, or TCP in place of RDMA); a few "
                      "percent or less: the plan is bound by bandwidth and compute, not by network latency.", us=us))

    def calibration(self):
        r, s = self.r, self.s
        if not r.calibration:
            return
        self.h2("Calibration")
        c = r.calibration
        if "error" in c:
            self.p(self.e(s.f("The scenario names calibration profile {name!r}, which could not be used:",
                              name=c["name"])) + " " + f'<span style="color:#B22222">{self.e(c["error"])}</span>')
            return
        rows = [[self.e(s("Profile")), self.e(c["name"])], [self.e(s("Measured on")), self.e(f"{c['device']} {c['created']}")]]
        if c.get("gemm_max") is not None:
            rows.append([self.e(s("GEMM efficiency (of datasheet peak)")), fmt.pct(c["gemm_max"])])
        if c.get("gemm_overhead_s") is not None:
            rows.append([self.e(s("Overhead per GEMM")), fmt.duration(c["gemm_overhead_s"], s)])
        if c.get("bw_elementwise") is not None:
            rows.append([self.e(s("Memory-bound kernels (of HBM bandwidth)")), fmt.pct(c["bw_elementwise"])])
        for k, label in (("intra_busbw_gb_s", "Intra-node bus bandwidth"), ("inter_busbw_gb_s", "Inter-node bus bandwidth")):
            if c.get(k):
                rows.append([self.e(s(label)), f"{c[k]:,.0f} GB/s"])
        self.p(self.e(s("Probe measurements replace the engine's default efficiencies in every plan of this report.")),
               "small")
        self.table([s("Item"), s("Value")], rows, widths=[50, 50], small=True)

    def assumptions(self):
        r, s = self.r, self.s
        self.h2("Assumptions")
        items = [self._plain(s.engine(a)) for a in r.assumptions]
        if r.mode == "training":
            items.append(s("Costs: GPU-hours of the whole run at each hourly price of the instance (all GPUs of "
                           "every node billed); no storage, egress or idle time."))
        else:
            items.append(s("Cost per million tokens: the instance's hourly price divided by the decode throughput "
                           "at the given batch, running all the time."))
        if r.serving is not None:
            items.append(s("Serving: the scenario's serve section served by gpu-planner serve on each plan's machine; "
                           "cost per million output tokens at the on-demand price of the instances one deployment "
                           "needs, else at the price the instance has (the table names it)."))
        self.parts.append("<ul>" + "".join(f"<li>{self.e(a)}</li>" for a in items) + "</ul>")

    def _plain(self, text: str) -> str:
        """An engine sentence with the estimate's JSON field names said as the report says them."""
        for key, label in INTERNAL_KEYS.items():
            text = text.replace(key, self.s(label))
        return text

    def sources(self):
        r, s = self.r, self.s
        self.h2("Data sources")
        kinds = {"gpu": s("GPU"), "instance": s("Instance"), "fabric": s("Network"), "model": s("Model")}
        rows = [[self.e(kinds[x.kind]), self.e(x.name), self.url(x.url), self.e(x.retrieved or "-"),
                 self.e(x.price_date or "-")] for x in r.sources]
        self.table([s("Kind"), s("Row"), s("Source"), s("Retrieved"), s("Prices dated")], rows,
                   widths=[10, 22, 46, 11, 11], small=True)

    def notes(self):
        r, s = self.r, self.s
        self.h2("Notes")
        if r.notes.strip():
            for para in r.notes.split("\n\n"):
                self.p(self.e(para).replace("\n", "<br/>"))
        else:
            self.p(self.e(s("No notes.")), "small")


CSS = f"""
body {{ font-family: {FONT_STACK}; font-size: 9.5pt; color: #222; }}
h1 {{ font-size: 18pt; color: {ACCENT}; margin: 0 0 6pt 0; }}
h2 {{ font-size: 12.5pt; color: {ACCENT}; margin-top: 16px; margin-bottom: 4px; }}
h3 {{ font-size: 10pt; color: #333; margin: 8pt 0 3pt 0; }}
p.kicker {{ font-size: 9pt; margin: 0; }}
p.lead {{ font-size: 10pt; }}
p.small, table.small {{ font-size: 8.5pt; }}
table.grid {{ border-collapse: collapse; border-color: #BFC8D2; font-size: 8.5pt; }}
table.grid td, table.grid th {{ border: 1px solid #BFC8D2; padding: 3px 4px; }}
ul {{ margin-left: 0; }}
li {{ font-size: 8.5pt; }}
"""
WEB_CSS = CSS + """
body { max-width: 190mm; margin: 12mm auto; }
h1 { text-wrap: balance; }
h2, h3 { break-after: avoid; }
svg.chart { display: block; margin: 6pt 0; max-width: 100%; height: auto; }
a { color: #1F4E79; word-break: break-all; }
"""


def render(report, target: str = "html", chart_html=None) -> str:
    """The report as an HTML string for ``target`` ``"html"`` (browser) or ``"pdf"`` (the subset
    QTextDocument reads; ``render_pdf`` adds where its major sections start)."""
    return render_pdf(report, chart_html, target)[0]


def render_pdf(report, chart_html=None, target: str = "pdf") -> tuple[str, list[int]]:
    """(the report as one HTML document, the ordinals of the h2 headings that open a major
    section: pdf.py starts those on a new page unless most of the page is still free)."""
    if chart_html is None:
        chart_html = lambda ch: to_svg(ch) if ch is not None else ""  # noqa: E731
    d = _Doc(report, target, chart_html)
    d.title_block()
    d.recommendation()
    d.inputs()
    d.notes()  # the question the scenario asks: with the inputs, on the first page
    d.memory()
    d.time_and_cost()
    serving.section(d)  # only when the scenario has a serve section
    d.host_side()
    d.scaling()
    d.calibration()
    d.assumptions()
    d.sources()
    css = WEB_CSS if target == "html" else CSS
    lang = "zh-CN" if report.lang == "zh_CN" else "en"
    head = (f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8"/>'
            f"<title>{escape(report.title)}</title><style>{css}</style></head><body>")
    return head + "\n".join(d.parts) + "</body></html>\n", d.majors
