"""Fill the zh_CN catalogue's unfinished entries from the glossary.

    python tools/translate_zh_cn.py [--ts resources/i18n/planner_zh_CN.ts] [--refresh] [--strict]

The glossary (``resources/i18n/zh_CN_glossary.json``) maps English source strings to
Simplified Chinese: ``terms`` for every context, ``contexts`` for a context's own choice.
A string that is not in the glossary is also matched after taking off what Qt UIs add
around a term, and the same is put back around the translation:

- a mnemonic ``&F`` (``&File`` -> ``文件(&F)``, the usual Chinese form),
- a trailing ``...``/``…`` or ``:`` (``：`` in Chinese),
- a trailing parenthesised unit or term (``Memory per GPU (GiB)`` -> ``每 GPU 显存 (GiB)``),
- letter case (``memory per gpu`` finds ``Memory per GPU``).

Entries with no translation stay unfinished (Qt then shows the English text) and are
printed. A translation whose placeholders (``%1``, ``%n``, ``{name}``, ``{0}``, ``%s``)
differ from its source is refused. ``--refresh`` also rewrites finished entries that the
glossary now translates differently; by default hand-made translations are kept.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TS_PATH = os.path.join(ROOT, "resources", "i18n", "planner_zh_CN.ts")
GLOSSARY_PATH = os.path.join(ROOT, "resources", "i18n", "zh_CN_glossary.json")

# %1..%99, %n, %L1; {name}, {0}, {}, {x:.1f}; printf %s %d %.2f %(name)s.
PLACEHOLDER = re.compile(r"%L?\d{1,2}|%n|\{[A-Za-z0-9_]*(?:[:!][^{}]*)?\}|%\([A-Za-z_]\w*\)[sdfr]|%[-+0#]*\d*(?:\.\d+)?[sdfrxg]")
_MNEMONIC = re.compile(r"&(?!&)(\w)")
_PAREN_TAIL = re.compile(r"^(.*\S)\s*\(([^()]+)\)$")
# Parenthesised tails kept as they are (when the glossary has no translation): short units
# and abbreviations that Chinese UIs keep in Latin letters (GiB, TFLOP/s, %, USD).
_KEEP_LATIN = re.compile(r"^[\s%/$A-Za-z0-9.,+\-×*^_]*$")


def placeholders(text: str) -> list[str]:
    """The placeholders of ``text``, sorted (so their order may change in a translation)."""
    return sorted(PLACEHOLDER.findall(text or ""))


@dataclass
class Glossary:
    terms: dict
    contexts: dict = field(default_factory=dict)

    def __post_init__(self):
        self._lower = {k.lower(): v for k, v in self.terms.items()}

    def lookup(self, text: str, context: str = "") -> str | None:
        """The translation of ``text`` in ``context``, or None."""
        return self._lookup(text, context, depth=0)

    def _exact(self, text, context):
        ctx = self.contexts.get(context, {})
        if text in ctx:
            return ctx[text]
        return self.terms.get(text)

    def _lookup(self, text, context, depth):
        if depth > 4 or not text:
            return None
        hit = self._exact(text, context)  # exact first: a separator such as "; " is a string too
        if hit is not None or not text.strip():
            return hit
        m = _MNEMONIC.search(text)
        if m:
            base = self._lookup(text[:m.start()] + text[m.start() + 1:], context, depth + 1)
            if base is not None:
                return _with_mnemonic(base, m.group(1).upper())
        for tail, zh_tail in (("...", "..."), ("…", "…"), (":", "："), ("：", "：")):
            if text.endswith(tail) and len(text) > len(tail):
                base = self._lookup(text[:-len(tail)].rstrip(), context, depth + 1)
                if base is not None:
                    return base + zh_tail
        m = _PAREN_TAIL.match(text)
        if m:
            base = self._lookup(m.group(1), context, depth + 1)
            inner = m.group(2)
            inner_zh = self._lookup(inner, context, depth + 1)
            if inner_zh is None and _KEEP_LATIN.match(inner) and len(inner) <= 12 \
                    and sum(any(ch.isalpha() for ch in w) for w in inner.split()) <= 1:
                inner_zh = inner
            if base is not None and inner_zh is not None:
                return f"{base} ({inner_zh})" if inner_zh == inner else f"{base}（{inner_zh}）"
        low = self._lower.get(text.lower())
        if low is not None:
            return low
        return None


def _with_mnemonic(zh: str, letter: str) -> str:
    # "另存为..." + A -> "另存为(&A)..."; "文件" + F -> "文件(&F)".
    for tail in ("...", "…", "："):
        if zh.endswith(tail):
            return f"{zh[:-len(tail)]}(&{letter}){tail}"
    return f"{zh}(&{letter})"


def load_glossary(path: str = GLOSSARY_PATH) -> Glossary:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    terms = {k: v for k, v in data.get("terms", {}).items() if not k.startswith("_")}
    return Glossary(terms=terms, contexts=data.get("contexts", {}))


@dataclass
class FillResult:
    filled: int = 0          # entries given a translation by this run
    finished: int = 0        # entries finished after this run (all of them)
    missing: list = field(default_factory=list)   # (context, source) left unfinished
    refused: list = field(default_factory=list)   # (context, source, translation, why)


def _message_text(el) -> str:
    return el.text or "" if el is not None else ""


def fill(ts_path: str, glossary: Glossary, refresh: bool = False) -> FillResult:
    """Fill ``ts_path``'s unfinished messages from ``glossary`` in place."""
    tree = ET.parse(ts_path)
    root = tree.getroot()
    res = FillResult()
    for ctx_el in root.iter("context"):
        context = _message_text(ctx_el.find("name"))
        for msg in ctx_el.iter("message"):
            source = _message_text(msg.find("source"))
            tr_el = msg.find("translation")
            if tr_el is None:
                tr_el = ET.SubElement(msg, "translation", {"type": "unfinished"})
            kind = tr_el.get("type")
            if kind in ("vanished", "obsolete"):
                continue
            numerus = msg.get("numerus") == "yes"
            current = _translation_text(tr_el, numerus)
            done = kind is None and bool(current)
            zh = glossary.lookup(source, context)
            if zh is not None and placeholders(zh) != placeholders(source):
                res.refused.append((context, source, zh, f"placeholders {placeholders(source)} vs {placeholders(zh)}"))
                zh = None
            if done and not (refresh and zh is not None and zh != current):
                res.finished += 1
                continue
            if zh is None:
                res.missing.append((context, source))
                continue
            _set_translation(tr_el, zh, numerus)
            res.filled += 1
            res.finished += 1
    _write_ts(tree, ts_path)
    return res


def _translation_text(tr_el, numerus: bool) -> str:
    if numerus:
        forms = tr_el.findall("numerusform")
        return forms[0].text or "" if forms else ""
    return tr_el.text or ""


def _set_translation(tr_el, zh: str, numerus: bool) -> None:
    tr_el.attrib.pop("type", None)
    if numerus:
        for f in list(tr_el):
            tr_el.remove(f)
        tr_el.text = None
        ET.SubElement(tr_el, "numerusform").text = zh  # Chinese has one plural form
    else:
        tr_el.text = zh


def _write_ts(tree, path: str) -> None:
    ET.indent(tree, space="    ")
    body = ET.tostring(tree.getroot(), encoding="unicode")
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n')
        f.write(body + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="fill zh_CN translations from the glossary")
    ap.add_argument("--ts", default=TS_PATH)
    ap.add_argument("--glossary", default=GLOSSARY_PATH)
    ap.add_argument("--refresh", action="store_true", help="also rewrite finished entries the glossary changes")
    ap.add_argument("--strict", action="store_true", help="exit 1 when entries are left untranslated")
    args = ap.parse_args(argv)
    res = fill(args.ts, load_glossary(args.glossary), refresh=args.refresh)
    for ctx, src, zh, why in res.refused:
        print(f"refused: [{ctx}] {src!r} -> {zh!r}: {why}", file=sys.stderr)
    for ctx, src in res.missing:
        print(f"untranslated: [{ctx}] {src!r}")
    print(f"{res.filled} filled, {res.finished} finished, {len(res.missing)} untranslated; "
          f"run tools/update_translations.py to compile the .qm")
    return 1 if args.strict and res.missing else 0


if __name__ == "__main__":
    sys.exit(main())
