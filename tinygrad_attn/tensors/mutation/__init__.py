"""In-place changes of tensors with a graph: rebasing history, views and metadata
(``inplace.py``), every ``name_`` twin from one table (``inplace_variants.py``) and every
``op=`` (``augmented_assignment.py``)."""
