"""Where and how code runs, and the modules a PyTorch script imports for its switches: devices
and array namespaces (``backend.py``), ``tga.cuda``, ``tga.accelerator``, freed-memory keeping
(``malloc.py``), BLAS threads (``threads.py``), autocast and ``GradScaler`` (``amp.py``),
deterministic mode and matmul precision (``flags.py``), ``tga.jit``; and the names this library
leaves out (``distributed.py``, ``profiler.py``, ``fx.py``), which raise a ``NotImplementedError``
naming themselves when called (``_not_here.py``). The package registers ``tga.cuda``,
``tga.jit``, ``tga.amp`` ... under PyTorch's module paths."""
