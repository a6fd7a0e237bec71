"""Shapes and views: reshaping, permuting and expanding as Tensor methods (``tensor_shape.py``),
stacking, splitting, ``take`` and ``diff`` (``shape_functions.py``), and the one rule for axes,
``dim``/``axis`` and ``keepdim``/``keepdims`` (``dims.py``); the ``*_copy`` twins of the views (``view_copies.py``)."""
