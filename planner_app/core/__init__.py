"""The sizing engine: pure Python and numpy, no Qt, pandas or GPU library. Its rooms:
``models`` (model descriptions and Hugging Face traces), ``training``, ``inference`` (one batch
through a framework), ``serving`` (continuous-batching servers), ``hardware`` (GPUs, links and
networks) and ``plans`` (sweeps, search, ranking, cost, scaling); ``errors`` and ``text`` (the
translatable sentences the engine writes) serve them all."""
