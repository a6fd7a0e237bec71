"""Elementwise operations: the arithmetic operators (``tensor_arith.py``), PyTorch's method
spellings (``tensor_torch.py``: ``add gt div(rounding_mode=) clamp ...``), trigonometry, logic
and bitwise functions (``math_functions.py``) and the gamma family, ``erfc``, ``logit``
(``special_functions.py``)."""
