"""The calls of tests/tensor/test_no_internal_errors.py whose outcome still differs from PyTorch's:
where PyTorch runs and we raise (``KNOWN_RAISES``), where PyTorch raises and we return
(``KNOWN_RETURNS``), and where both raise but ours is not an instance of PyTorch's class
(``KNOWN_CLASSES``: the call, and PyTorch's builtin class, not ours). Each entry is a difference
to remove, never to add (``python tools/argument_parity.py --write`` rewrites it)."""

KNOWN_RAISES: set[str] = {
    # NumPy has no complex half, so complex32 is not offered: x.chalf() raises
    "chalf('t0',)",
    # NumPy has no complex half, so complex32 is not offered: x.chalf() raises
    "chalf('t23',)",
    # NumPy has no complex half, so complex32 is not offered: x.chalf() raises
    "chalf('tb',)",
}

KNOWN_RETURNS: set[str] = {
    # PyTorch refuses an int var by an accident of its float-only branch; var=1 is a fair call
    "F.gaussian_nll_loss('t23', 't23', 0)",
    # PyTorch refuses an int var by an accident of its float-only branch; var=1 is a fair call
    "F.gaussian_nll_loss('t23', 0, 0)",
    # PyTorch refuses an int var by an accident of its float-only branch; var=1 is a fair call
    "F.gaussian_nll_loss('t23', 0, 1)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', -1)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', 0)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', 1)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', 1.5)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', 2)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', 5)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', -1)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', 0)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', 0, 0)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', 0, 1)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', 1)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', 1.5)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', 2)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', 5)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', True)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', True)",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', -1)",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 0)",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 0, 0)",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 0, 1)",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 1)",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 1.5)",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 2)",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 5)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', -1)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', 0)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', 0, 0)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', 0, 1)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', 1)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', 1.5)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', 2)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', 5)",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', True)",
    # the library's device lookup (tga.get_device(name)); with a tensor it is PyTorch's
    "tga.get_device()",
    # the library's device lookup (tga.get_device(name)); with a tensor it is PyTorch's
    "tga.get_device(None,)",
    # view_copy is Tensor.view's copy, which takes one int; PyTorch's free view_copy refuses it
    "tga.view_copy('t23', -1)",
}

KNOWN_CLASSES: dict[str, str] = {
    "F.affine_grid('t23', 'a')": "NotImplementedError, not ValueError",
    "F.affine_grid('t23', 't23')": "NotImplementedError, not InvalidArgumentError",
    "F.affine_grid('t23', 't23', 't23')": "NotImplementedError, not TypeError",
    "F.affine_grid('t23', 't23', 0)": "NotImplementedError, not TypeError",
    "F.binary_cross_entropy('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    "F.binary_cross_entropy_with_logits('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    "F.cross_entropy('t23', 't23', 0)": "TypeError, not InvalidArgumentError",
    "F.cross_entropy('t23', (2, 3))": "TypeError, not IndexError",
    "F.grid_sample('t23', 't0')": "IndexError, not RuntimeError",
    "F.grid_sample('t23', 't23', 't23')": "ValueError, not TypeError",
    "F.grid_sample('t23', 't23', 0)": "ValueError, not TypeError",
    "F.grid_sample('t23', 0, 'tix')": "ValueError, not TypeError",
    "F.grid_sample('t23', 0, 0)": "ValueError, not TypeError",
    "F.grid_sample('t23', 0, 1)": "ValueError, not TypeError",
    "F.group_norm('t23', 0, 0)": "ZeroDivisionError, not TypeError",
    "F.group_norm('t23', 0, 1)": "ZeroDivisionError, not TypeError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', 't23', 't23')": "ValueError, not TypeError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', 't23', 0)": "ValueError, not TypeError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', 0, 'tix')": "AttributeError, not InvalidArgumentError",
    "F.lp_pool1d('t23', 't23', 0)": "RuntimeError, not TypeError",
    "F.lp_pool2d('t23', 't23', 0)": "IndexError, not TypeError",
    "F.lp_pool2d('t23', 0, 'tix')": "ValueError, not TypeError",
    "F.lp_pool3d('t23', 't23', 't23')": "ValueError, not TypeError",
    "F.lp_pool3d('t23', 't23', 0)": "RuntimeError, not TypeError",
    "F.lp_pool3d('t23', 0, 'tix')": "ValueError, not TypeError",
    "F.margin_ranking_loss('t23', 't23', 0)": "AttributeError, not RuntimeError",
    "F.max_unpool1d('t23', 't23', 't23')": "IndexError, not TypeError",
    "F.max_unpool3d('t23', 0, 0)": "IndexError, not TypeError",
    "F.max_unpool3d('t23', 0, 1)": "IndexError, not TypeError",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 0, 'tix')": "AttributeError, not InvalidArgumentError",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', True)": "AttributeError, not RuntimeError",
    "F.multilabel_soft_margin_loss('t23', (2, 3))": "TypeError, not InvalidArgumentError",
    "F.nll_loss('t23', (2, 3))": "TypeError, not IndexError",
    "F.normalize('t23', 'a')": "RuntimeError, not TypeError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', 0, 'tix')": "AttributeError, not InvalidArgumentError",
    "resize('t23', 'a')": "RuntimeError, not TypeError",
    "resize('t23', 't0')": "RuntimeError, not TypeError",
    "resize('t23', 1.5)": "RuntimeError, not TypeError",
    # the removed symeig is one function as method and free function: the free function's third argument
    "symeig('t23', 0, 't23')": "TypeError, not RuntimeError",
    # the removed symeig is one function as method and free function: the free function's third argument
    "symeig('t23', 0, 'tix')": "TypeError, not RuntimeError",
    # the removed symeig is one function as method and free function: the free function's third argument
    "symeig('t23', 0, 0)": "TypeError, not RuntimeError",
    "tga.get_device('a',)": "TypeError, not RuntimeError",
    "tga.get_device(3,)": "TypeError, not CudaUnavailableError",
    "tga.pca_lowrank('t23', 't0')": "ValueError, not TypeError",
    "tga.tensordot('t23', 0, 'tix')": "AssertionError, not TypeError",
    # view_copy is Tensor.view's copy, which takes one int; PyTorch's free view_copy refuses it
    "tga.view_copy('t23', 0)": "TypeError, not InvalidArgumentError",
    # view_copy is Tensor.view's copy, which takes one int; PyTorch's free view_copy refuses it
    "tga.view_copy('t23', 2)": "TypeError, not InvalidArgumentError",
    # view_copy is Tensor.view's copy, which takes one int; PyTorch's free view_copy refuses it
    "tga.view_copy('t23', 5)": "TypeError, not InvalidArgumentError",
    "unflatten('t23', 0, 0)": "RuntimeError, not TypeError",
}
