"""Indexing: ``x[...]`` with PyTorch's and NumPy's rules, and ``x[...] = v`` (``indexing.py``)."""
