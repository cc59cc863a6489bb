"""Count parameters of Hugging Face models as PyTorch does, for the engine's tests.

Builds each model in tests/data/hf_configs/ on the ``meta`` device (no memory, no
download) and writes ``sum(p.numel() for p in model.parameters())`` to
tests/data/hf_param_counts.json, the record that tests/unit/test_model_params.py reads
(tests/unit/test_hf_meta_models.py makes the same comparison live, in CI). Needs torch
and transformers::

    python -m benchmarks.gpu.hf_param_counts
"""
import glob
import json
import os
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tests", "data")


def main():
    warnings.filterwarnings("ignore")
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM

    out = {}
    for path in sorted(glob.glob(os.path.join(DATA, "hf_configs", "*.json"))):
        name = os.path.basename(path)[:-5]
        with open(path) as f:
            d = json.load(f)
        mt = d.pop("model_type")
        cfg = AutoConfig.for_model(mt, **d)
        cls = AutoModelForMaskedLM if mt == "bert" else AutoModelForCausalLM
        with torch.device("meta"):
            model = cls.from_config(cfg)
        out[name] = {"class": type(model).__name__, "params": sum(p.numel() for p in model.parameters())}
        print(f"{name:24s} {out[name]['class']:24s} {out[name]['params']:>18,}")
    result = {"command": "python -m benchmarks.gpu.hf_param_counts", "torch": torch.__version__,
              "transformers": transformers.__version__, "counts": out}
    with open(os.path.join(DATA, "hf_param_counts.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
