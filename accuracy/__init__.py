"""Accuracy evaluators: the engine's estimates against measured and published runs (tests/data/),
importable by the tests and the validation document's generator (benchmarks/make_validation.py).
Each evaluator also runs on its own from the repository root: ``python -m accuracy.<module>``
(accuracy/README.md lists them)."""
