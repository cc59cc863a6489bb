"""Accuracy evaluators: the engine's estimates against measured and published runs (tests/data/),
importable by the tests, the validation document's generator and the scripts of benchmarks/."""
