"""Reductions: sums, means, extrema, norms and scans as Tensor methods (``tensor_reduce.py``),
and statistics: medians, quantiles, ``var_mean``, ``unique``, ``bincount``, ``histc``
(``statistics.py``)."""
