"""Creation: ``tga.tensor`` and the ``tga.zeros``-style factories (``creation.py``) and Tensor's
classmethod constructors (``tensor_creation.py``)."""
