"""Plans: the vectorised memory and step-time sweeps (``sweep``, ``sweep_time``), the plan search
(``search``), ranking (``ranking``: Pareto front, cheapest, fastest, fewest GPUs), prices and cost
(``cost``) and multi-node scaling (``scaling``)."""
