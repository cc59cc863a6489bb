"""Training: the setup and parallel layout (``setup``), model states (``states``), activations
from the layer traces (``activations``), LoRA and QLoRA (``lora``), the step's memory timeline
(``memory``), its time (``timing``), checkpoints and the host side (``checkpoint``, ``host``), the
advice (``advice``) and the estimate that joins them (``estimate``)."""
