"""Optimizers, learning-rate schedules and gradient clipping.

>>> from tinygrad_attn.optim import AdamW
>>> opt = AdamW(model.parameters(), lr=3e-4)  # doctest: +SKIP
>>> loss.backward(); opt.step(); opt.zero_grad()  # doctest: +SKIP

Every optimizer of ``torch.optim`` is here with its constructor arguments and defaults:
``SGD Adam AdamW RMSprop Adagrad Adadelta Adamax NAdam RAdam ASGD Rprop LBFGS Adafactor Muon``
(``SparseAdam`` raises at its first step: gradients here are dense)
(``LBFGS.step(closure)``, with ``line_search_fn="strong_wolfe"`` too).

Every update runs on the parameters' own device with its array namespace, and the
state (momentum, Adam's moments) lives there too, following a later ``module.to()``.
Optimizers take parameter groups and have ``state_dict()``/``load_state_dict()`` laid
out as PyTorch's (``tga.save`` stores them); ``lr_scheduler`` holds the schedules with
PyTorch's names, ``swa_utils`` weight averaging (``AveragedModel``, ``SWALR``, ``update_bn``).

>>> sched = lr_scheduler.CosineAnnealingLR(opt, T_max=100)  # doctest: +SKIP
>>> tga.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict()}, "ckpt.safetensors")  # doctest: +SKIP
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .clip import clip_grad_norm_
from .lbfgs import LBFGS
from .lr_scheduler import LambdaLR, LRScheduler, NoamSchedule, noam_rate
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
    "Optimizer",
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "Adamax",
    "NAdam",
    "RAdam",
    "ASGD",
    "Rprop",
    "LBFGS",
    "Adafactor",
    "SparseAdam",
    "Muon",
    "LRScheduler",
    "LambdaLR",
    "NoamSchedule",
    "noam_rate",
    "clip_grad_norm_",
    "lr_scheduler",
    "swa_utils",
]
