"""The :class:`Tensor` class (``_tensor.py``) and the operations that give it its methods and
``tga.`` functions, grouped by what they do: ``elementwise/`` (operators, math, special
functions), ``reduce/`` (reductions, scans, statistics), ``shape/`` (views, stacking, splitting,
the axis rule), ``index/`` (``x[...]`` and ``x[...] = v``), ``factories/`` (constructors),
``mutation/`` (in-place changes and every ``name_`` twin); beside them the dtypes and their
promotion, gather/scatter/sort (``tensor_functions.py``), Python's protocols and printing.
Each module's methods are installed on :class:`Tensor` by the package's ``install_methods``."""
