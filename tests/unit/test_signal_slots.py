"""A button's ``clicked(bool)`` (or an action's ``triggered(bool)``, ``toggled(bool)``)
connected straight to a method with parameters passes the checked flag as the first one:
Probe ▸ Run benchmarks once got ``timeout_s=False`` and failed at once ("did not finish
within 0 s"). Such connections go through a lambda or a method with no parameters."""
from __future__ import annotations

import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOOL_SIGNALS = ("clicked", "triggered", "toggled")


def offending_connections(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    methods = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for b in node.body:
                if isinstance(b, ast.FunctionDef):
                    methods[b.name] = b
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "connect"
                and node.args):
            continue
        sig, slot = node.func.value, node.args[0]
        if not (isinstance(sig, ast.Attribute) and sig.attr in BOOL_SIGNALS):
            continue
        if isinstance(slot, ast.Attribute) and isinstance(slot.value, ast.Name) and slot.value.id == "self":
            m = methods.get(slot.attr)
            # a parameter that is not the checked flag itself receives it
            params = [a.arg for a in m.args.args[1:]] if m else []
            if params and not (sig.attr == "toggled" or params[0] in ("checked", "_checked")):
                found.append((node.lineno, f"{sig.attr} -> {slot.attr}({', '.join(params)})"))
    return found


def test_the_lint_finds_the_probe_bug():
    bad = ("class P:\n    def __init__(self):\n        self.b.clicked.connect(self.run)\n"
           "    def run(self, timeout_s=900.0):\n        pass\n")
    assert offending_connections(bad) == [(3, "clicked -> run(timeout_s)")]


def test_no_bool_signal_lands_in_a_parameter():
    bad = []
    for path in glob.glob(os.path.join(ROOT, "planner_app", "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as f:
            for line, what in offending_connections(f.read()):
                bad.append(f"{os.path.relpath(path, ROOT)}:{line}: {what}")
    assert not bad, "connect through a lambda: " + "; ".join(bad)
