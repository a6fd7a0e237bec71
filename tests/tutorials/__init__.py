"""A corpus of public PyTorch tutorials and reference implementations about attention,
each re-written as one module against a ``torch``-like namespace.

Every module has ``tutorial(torch, nn, F)``, which defines the tutorial's classes and
functions with whatever library it is given (PyTorch, or ``tinygrad_attn`` with only the
imports changed) and returns them with the pieces the test harness calls:

- ``model()``: the model as the tutorial builds it (its init calls included);
- ``optimizer(model)``: what the tutorial's training loop steps (optimizers, schedulers);
- ``forward(model, batch)``: ``(outputs, loss)`` for one batch, as the tutorial computes them;
- ``update(model, opt)``: the rest of the loop after ``loss.backward()`` (clipping,
  ``step``, ``zero_grad``, the schedule).

``data(rng)`` (module level) gives a batch as NumPy arrays. ``tests/examples/test_tutorial_corpus.py``
runs each module in both libraries with PyTorch's weights and compares everything.
"""
