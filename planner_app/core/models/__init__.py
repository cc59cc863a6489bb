"""Model descriptions: ``spec.ModelSpec`` (a preset or an imported ``config.json``, with PyTorch's
exact parameter count), ``hf_config`` (reading and writing Hugging Face configs; ``hf_families`` and
``hf_fields`` per family), the layer traces that simulate what each op allocates and saves
(``trace``, ``hf_ops``, ``layers_hf``, ``layers_families``, ``layers_megatron``) and ``flops``."""
