"""One inference batch through a framework (Hugging Face ``model.generate()`` or a hand-written
loop): its memory (``memory``), prefill and decode time (``timing``) and the estimate (``estimate``).
Serving under load is ``core.serving``."""
