import numpy as np

from tinygrad import Tensor  # noqa


def _to_np_dtype(dt):
    return np.dtype(dt)
