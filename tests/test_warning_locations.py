"""A warning the library raises points at the user's line (the first frame outside the
package), however deep in the package it is raised: through ``@public``'s argument check, a
composite, a module's ``__call__``, an optimizer or a scheduler."""

from __future__ import annotations

import warnings

import pytest

import tinygrad_attn as tga

F = tga.nn.functional


def _duplicate_parameters():
    p = tga.nn.Parameter(tga.ones(2))
    tga.optim.SGD([p, p], lr=0.1)


def _scheduler_lr_before_step():
    opt = tga.optim.SGD([tga.nn.Parameter(tga.ones(2))], lr=0.1)
    tga.optim.lr_scheduler.StepLR(opt, 1).get_lr()


CALLS = {
    "a deprecated function (@public, its argument check)": lambda: tga.cholesky(tga.eye(2)),
    "a loss's shape warning": lambda: F.mse_loss(tga.ones(2, 3), tga.ones(3)),
    "a module's forward": lambda: tga.nn.MSELoss()(tga.ones(2, 3), tga.ones(3)),
    "a deprecated init": lambda: tga.nn.init.normal(tga.ones(2, 2)),
    "an optimizer's construction": _duplicate_parameters,
    "a scheduler": _scheduler_lr_before_step,
    "a positional state_dict argument": lambda: tga.nn.Linear(2, 2).state_dict({}, "x."),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_warning_points_at_the_users_line(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CALLS[call]()
    assert caught, f"{call}: no warning"
    assert all(w.filename == __file__ for w in caught), [(w.filename, w.lineno, str(w.message)[:60]) for w in caught]
