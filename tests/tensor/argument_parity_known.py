"""The calls of tests/tensor/test_no_internal_errors.py whose outcome still differs from PyTorch's:
where PyTorch runs and we raise (``KNOWN_RAISES``), where PyTorch raises and we return
(``KNOWN_RETURNS``), and where both raise but ours is not an instance of PyTorch's class
(``KNOWN_CLASSES``: the call, and PyTorch's builtin class, not ours). Each entry is a difference
to remove, never to add (``python tools/argument_parity.py --write`` rewrites it)."""

KNOWN_RAISES: set[str] = {
    # PyTorch's deprecated addcdiv(value, tensor1, tensor2); value= is the form it documents
    "addcdiv('t23', 0, 'tix', 't23')",
    # PyTorch's deprecated addcdiv_(value, tensor1, tensor2); value= is the form it documents
    "addcdiv_('t23', 0, 'tix', 't23')",
    # PyTorch's deprecated addcmul(value, tensor1, tensor2); value= is the form it documents
    "addcmul('t23', 0, 'tix', 't23')",
    # PyTorch's deprecated addcmul_(value, tensor1, tensor2); value= is the form it documents
    "addcmul_('t23', 0, 'tix', 't23')",
    # NumPy has no bfloat16, so the dtype is not offered: x.bfloat16() raises
    "bfloat16('t0',)",
    # NumPy has no bfloat16, so the dtype is not offered: x.bfloat16() raises
    "bfloat16('t23',)",
    # NumPy has no bfloat16, so the dtype is not offered: x.bfloat16() raises
    "bfloat16('tb',)",
    # PyTorch's Python code reads None as a 0-d shape; None is no shape
    "tga.broadcast_shapes(None,)",
    # deprecated torch.cholesky returns a non-square empty input as is; linalg.cholesky raises
    "tga.cholesky('te',)",
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
    "F.l1_loss('t23', True)",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', None)",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23',)",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('te',)",
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
    "new('t23', 1.5)",
    "new_full('t23', 0, 0)",
    "resize('t0',)",
    "resize('t23', (2, 3))",
    "tga.as_tensor('t23', 'a')",
    "tga.as_tensor('t23', None)",
    "tga.broadcast_shapes('te',)",
    "tga.cumulative_trapezoid('t23', None)",
    # one function serves torch.flip and Tensor.flip, whose method takes one int; the free one refuses it
    "tga.flip('t23', -1)",
    # one function serves torch.flip and Tensor.flip, whose method takes one int; the free one refuses it
    "tga.flip('t23', 0)",
    # the library's device lookup (tga.get_device(name)); with a tensor it is PyTorch's
    "tga.get_device()",
    # the library's device lookup (tga.get_device(name)); with a tensor it is PyTorch's
    "tga.get_device(None,)",
    "tga.hsplit('t23', 0, 0)",
    "tga.layer_norm('t23', None)",
    "tga.layer_norm('t23',)",
    "tga.layer_norm('te',)",
    "tga.norm_except_dim('te',)",
    "tga.nuclear_norm('t23', None)",
    # one function serves torch.reshape and Tensor.reshape, whose method takes one int
    "tga.reshape('t23', -1)",
    # one function serves torch.tile and Tensor.tile, whose method takes one int; the free one refuses it
    "tga.tile('t23', 0)",
    # one function serves torch.tile and Tensor.tile, whose method takes one int; the free one refuses it
    "tga.tile('t23', 0, 0)",
    # one function serves torch.tile and Tensor.tile, whose method takes one int; the free one refuses it
    "tga.tile('t23', 2)",
    # one function serves torch.tile and Tensor.tile, whose method takes one int; the free one refuses it
    "tga.tile('t23', 5)",
    "tga.trapezoid('t23', None)",
    "tga.trapz('t23', None)",
    # view_copy is Tensor.view's copy, which takes one int; PyTorch's free view_copy refuses it
    "tga.view_copy('t23', -1)",
    "tga.vsplit('t23', 0, 0)",
    "type('t23', 'a')",
    "type('t23', [])",
}

KNOWN_CLASSES: dict[str, str] = {
    "F.adaptive_avg_pool1d('t23', 't23')": "TypeError, not InvalidArgumentError",
    "F.adaptive_avg_pool1d('tix', 't23')": "TypeError, not InvalidArgumentError",
    "F.adaptive_max_pool1d('t23', 't23')": "TypeError, not InvalidArgumentError",
    "F.adaptive_max_pool1d('t23', 't23', 0)": "TypeError, not InvalidArgumentError",
    "F.adaptive_max_pool1d_with_indices('t23', 't23')": "TypeError, not InvalidArgumentError",
    "F.adaptive_max_pool1d_with_indices('t23', 't23', 't23')": "TypeError, not InvalidArgumentError",
    "F.adaptive_max_pool1d_with_indices('t23', 't23', 0)": "TypeError, not InvalidArgumentError",
    "F.affine_grid('t23', 'a')": "NotImplementedError, not ValueError",
    "F.affine_grid('t23', 't23')": "NotImplementedError, not InvalidArgumentError",
    "F.affine_grid('t23', 't23', 't23')": "NotImplementedError, not TypeError",
    "F.affine_grid('t23', 't23', 0)": "NotImplementedError, not TypeError",
    "F.avg_pool2d('t23', (2, 3))": "IndexError, not InvalidArgumentError",
    "F.avg_pool2d('t23', -1)": "IndexError, not InvalidArgumentError",
    "F.avg_pool2d('t23', 0)": "IndexError, not InvalidArgumentError",
    "F.avg_pool2d('t23', 0, 0)": "IndexError, not InvalidArgumentError",
    "F.avg_pool2d('t23', 0, 1)": "IndexError, not InvalidArgumentError",
    "F.avg_pool2d('t23', 1)": "IndexError, not InvalidArgumentError",
    "F.avg_pool2d('t23', 2)": "IndexError, not InvalidArgumentError",
    "F.avg_pool2d('t23', 5)": "IndexError, not InvalidArgumentError",
    "F.bilinear('t23', 't23', 't23')": "IndexError, not InvalidArgumentError",
    "F.binary_cross_entropy('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    "F.binary_cross_entropy('tix', 't23')": "ValueError, not UnsupportedDtypeError",
    "F.binary_cross_entropy_with_logits('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    "F.binary_cross_entropy_with_logits('tix', 't23')": "ValueError, not UnsupportedDtypeError",
    "F.cross_entropy('t23', 't23', 0)": "TypeError, not InvalidArgumentError",
    "F.cross_entropy('t23', (2, 3))": "TypeError, not IndexError",
    "F.embedding_bag('t23', 't23')": "RuntimeError, not IndexError",
    "F.embedding_bag('tix', 't23')": "RuntimeError, not IndexError",
    "F.fold('t23', 't23', 0)": "TypeError, not InvalidArgumentError",
    "F.fractional_max_pool2d('t23', 't23', 't23')": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool2d('t23', 't23', 0)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool2d('t23', 0, 'tix')": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool2d('t23', 0, 0)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool2d('t23', 0, 1)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool2d_with_indices('t23', 't23', 't23')": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool2d_with_indices('t23', 't23', 0)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool2d_with_indices('t23', 0, 'tix')": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool2d_with_indices('t23', 0, 0)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool2d_with_indices('t23', 0, 1)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d('t23', 't23', 't23')": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d('t23', 't23', 0)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d('t23', 0, 'tix')": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d('t23', 0, 0)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d('t23', 0, 1)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d_with_indices('t23', 't23', 't23')": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d_with_indices('t23', 't23', 0)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d_with_indices('t23', 0, 'tix')": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d_with_indices('t23', 0, 0)": "IndexError, not InvalidArgumentError",
    "F.fractional_max_pool3d_with_indices('t23', 0, 1)": "IndexError, not InvalidArgumentError",
    "F.gelu('t23', 'a')": "TypeError, not InvalidArgumentError",
    "F.grid_sample('t23', 't0')": "IndexError, not RuntimeError",
    "F.grid_sample('t23', 't23', 't23')": "ValueError, not TypeError",
    "F.grid_sample('t23', 't23', 0)": "ValueError, not TypeError",
    "F.grid_sample('t23', 0, 'tix')": "ValueError, not TypeError",
    "F.grid_sample('t23', 0, 0)": "ValueError, not TypeError",
    "F.grid_sample('t23', 0, 1)": "ValueError, not TypeError",
    "F.group_norm('t23', 0)": "ZeroDivisionError, not RuntimeError",
    "F.group_norm('t23', 0, 'tix')": "ZeroDivisionError, not RuntimeError",
    "F.group_norm('t23', 0, 0)": "ZeroDivisionError, not TypeError",
    "F.group_norm('t23', 0, 1)": "ZeroDivisionError, not TypeError",
    "F.group_norm('t23', 5)": "ValueError, not RuntimeError",
    "F.gumbel_softmax('t23', 'a')": "TypeError, not ValueError",
    "F.gumbel_softmax('t23', (2, 3))": "TypeError, not InvalidArgumentError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', 't23', 't23')": "ValueError, not TypeError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', 't23', 0)": "ValueError, not TypeError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.huber_loss('t23', True)": "AttributeError, not RuntimeError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.l1_loss('t23', 0, 'tix')": "AttributeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t0',)": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', 't0')": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', 't23')": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', 't23', 't23')": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', -1)": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', 0)": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', 1)": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', 2)": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('t23', 5)": "TypeError, not InvalidArgumentError",
    # layer_norm's normalized_shape defaults to the last axis, the library's first meaning
    "F.layer_norm('tix', 't23')": "TypeError, not InvalidArgumentError",
    "F.lp_pool1d('t23', 't23', 0)": "RuntimeError, not TypeError",
    "F.lp_pool2d('t23', 't23', 0)": "IndexError, not TypeError",
    "F.lp_pool2d('t23', 0, 'tix')": "ValueError, not TypeError",
    "F.lp_pool2d('t23', 0, 0)": "IndexError, not InvalidArgumentError",
    "F.lp_pool2d('t23', 0, 1)": "IndexError, not InvalidArgumentError",
    "F.lp_pool3d('t23', 't23', 't23')": "ValueError, not TypeError",
    "F.lp_pool3d('t23', 't23', 0)": "RuntimeError, not TypeError",
    "F.lp_pool3d('t23', 0, 'tix')": "ValueError, not TypeError",
    "F.margin_ranking_loss('t23', 't23', 0)": "AttributeError, not RuntimeError",
    "F.max_unpool1d('t23', 't23', 't23')": "IndexError, not TypeError",
    "F.max_unpool3d('t23', 't23', 0)": "IndexError, not InvalidArgumentError",
    "F.max_unpool3d('t23', 0, 0)": "IndexError, not TypeError",
    "F.max_unpool3d('t23', 0, 1)": "IndexError, not TypeError",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 'a')": "AttributeError, not ValueError",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', 0, 'tix')": "AttributeError, not InvalidArgumentError",
    # a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size
    "F.mse_loss('t23', True)": "AttributeError, not RuntimeError",
    "F.multilabel_soft_margin_loss('t23', (2, 3))": "TypeError, not InvalidArgumentError",
    "F.nll_loss('t23', 't23')": "RuntimeError, not TypeError",
    "F.nll_loss('t23', 't23', 't23')": "RuntimeError, not TypeError",
    "F.nll_loss('t23', (2, 3))": "TypeError, not IndexError",
    "F.nll_loss('tix', 't23')": "ValueError, not UnsupportedDtypeError",
    "F.normalize('t23', 'a')": "RuntimeError, not TypeError",
    "F.pad('t23', 'a')": "TypeError, not ValueError",
    "F.pad('t23', 't23')": "TypeError, not InvalidArgumentError",
    "F.pad('tix', 't23')": "TypeError, not InvalidArgumentError",
    "F.rms_norm('t23', 't23')": "TypeError, not InvalidArgumentError",
    "F.rms_norm('t23', 't23', 't23')": "TypeError, not InvalidArgumentError",
    "F.rms_norm('t23', -1)": "TypeError, not InvalidArgumentError",
    "F.rms_norm('t23', 0)": "TypeError, not InvalidArgumentError",
    "F.rms_norm('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "F.rms_norm('t23', 1)": "TypeError, not InvalidArgumentError",
    "F.rms_norm('t23', 2)": "TypeError, not InvalidArgumentError",
    "F.rms_norm('t23', 5)": "TypeError, not InvalidArgumentError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', (2, 3))": "AttributeError, not InvalidArgumentError",
    # a number as the target is this library's convenience, as in mse_loss
    "F.smooth_l1_loss('t23', 0, 'tix')": "AttributeError, not InvalidArgumentError",
    "F.unfold('t23', (2, 3))": "IndexError, not InvalidArgumentError",
    "F.unfold('t23', 1)": "IndexError, not InvalidArgumentError",
    "F.unfold('t23', 2)": "IndexError, not InvalidArgumentError",
    "F.unfold('t23', 5)": "IndexError, not InvalidArgumentError",
    "addbmm('t23', 0, 'tix', 't23')": "IndexError, not TypeError",
    "addbmm_('t23', 0, 'tix', 't23')": "IndexError, not TypeError",
    "addmm('t23', 0, 'tix', 't23')": "RuntimeError, not TypeError",
    "addmm_('t23', 0, 'tix', 't23')": "RuntimeError, not TypeError",
    "addmv('t23', 0, 'tix', 't23')": "RuntimeError, not TypeError",
    "addmv_('t23', 0, 'tix', 't23')": "RuntimeError, not TypeError",
    "addr('t23', 0, 'tix', 't23')": "RuntimeError, not TypeError",
    "addr_('t23', 0, 'tix', 't23')": "RuntimeError, not TypeError",
    "baddbmm('t23', 0, 'tix', 't23')": "IndexError, not TypeError",
    "baddbmm_('t23', 0, 'tix', 't23')": "IndexError, not TypeError",
    "bernoulli_('t23', 'te')": "RuntimeError, not ValueError",
    "bernoulli_('t23', 'ti')": "NotImplementedError, not RuntimeError",
    "dsplit('t23', 0, 't23')": "TypeError, not RuntimeError",
    "dsplit('t23', 0, 'tix')": "TypeError, not RuntimeError",
    "dsplit('t23', 0, 'tix', 't23')": "TypeError, not RuntimeError",
    "fill_('t23', 'a')": "TypeError, not ValueError",
    "fill_('t23', (2, 3))": "TypeError, not InvalidArgumentError",
    "fill_('t23', [])": "TypeError, not InvalidArgumentError",
    "histogram('t23', 'a')": "TypeError, not ValueError",
    "hsplit('t23', 0, 't23')": "TypeError, not InvalidArgumentError",
    "hsplit('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "hsplit('t23', 0, 'tix', 't23')": "TypeError, not InvalidArgumentError",
    "index_add('t23', 0, 'tix', 't23')": "IndexError, not RuntimeError",
    "index_add_('t23', 0, 'tix', 't23')": "IndexError, not RuntimeError",
    "index_copy('t23', 0, 'tix', 't23')": "IndexError, not RuntimeError",
    "index_copy_('t23', 0, 'tix', 't23')": "IndexError, not RuntimeError",
    "index_put('t23', 0, 'tix')": "TypeError, not RuntimeError",
    "index_put_('t23', 0, 'tix')": "TypeError, not RuntimeError",
    "index_put_('t23', 0, 0)": "TypeError, not RuntimeError",
    "index_select('t23', 0, 't23')": "IndexError, not OperandDtypeError",
    "mode('te', 0)": "IndexError, not ValueError",
    "moveaxis('t23', 0, 't23')": "TypeError, not RuntimeError",
    "movedim('t23', 0, 't23')": "TypeError, not RuntimeError",
    "new('t23', 'a')": "TypeError, not ValueError",
    "new_full('t23', 0, 't23')": "TypeError, not ValueError",
    "new_full('t23', 0, 'tix')": "TypeError, not ValueError",
    "new_full('t23', 0, 'tix', 't23')": "TypeError, not InvalidArgumentError",
    "norm('t23', 'a')": "RuntimeError, not ValueError",
    "repeat_interleave('t23', 'a')": "TypeError, not ValueError",
    "repeat_interleave('t23', 'ti')": "RuntimeError, not ValueError",
    "repeat_interleave('t23', (2, 3))": "TypeError, not ValueError",
    "repeat_interleave('t23', -1)": "RuntimeError, not ValueError",
    "repeat_interleave('t23', -3)": "RuntimeError, not ValueError",
    "repeat_interleave('t23', [])": "TypeError, not ValueError",
    "resize('t23', 'a')": "RuntimeError, not TypeError",
    "resize('t23', 't0')": "RuntimeError, not TypeError",
    "resize('t23', 1.5)": "RuntimeError, not TypeError",
    "roll('t23', 't23')": "TypeError, not InvalidArgumentError",
    "roll('t23', 'te')": "TypeError, not InvalidArgumentError",
    "roll('t23', 'ti')": "TypeError, not InvalidArgumentError",
    "scatter('t23', 0, 'tix')": "TypeError, not IndexRangeError",
    "scatter_('t23', 0, 'tix')": "TypeError, not IndexRangeError",
    "split('t23', 'a')": "TypeError, not ValueError",
    "split('t23', 't23')": "TypeError, not InvalidArgumentError",
    "split('t23', 'te')": "TypeError, not InvalidArgumentError",
    "split('t23', 'ti')": "TypeError, not InvalidArgumentError",
    "tensor_split('t23', 'a')": "TypeError, not ValueError",
    "tga.adaptive_avg_pool1d('t23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.adaptive_avg_pool1d('tix', 't23')": "TypeError, not InvalidArgumentError",
    "tga.adaptive_max_pool1d('t23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.addbmm('t23', 't23', 't23')": "IndexError, not RuntimeError",
    "tga.as_tensor('a',)": "TypeError, not ValueError",
    "tga.as_tensor('t23', 't0')": "TypeError, not ValueError",
    "tga.as_tensor('t23', 't23')": "TypeError, not ValueError",
    "tga.as_tensor('t23', 't23', 't23')": "TypeError, not ValueError",
    "tga.as_tensor('tix', 't23')": "TypeError, not ValueError",
    "tga.as_tensor(None,)": "RuntimeError, not TypeError",
    "tga.asarray('a',)": "TypeError, not ValueError",
    "tga.asarray(None,)": "RuntimeError, not TypeError",
    "tga.baddbmm('t23', 't23', 't23')": "IndexError, not InvalidArgumentError",
    "tga.bilinear('t23', 't23', 't23')": "IndexError, not InvalidArgumentError",
    "tga.broadcast_shapes('a',)": "TypeError, not ValueError",
    "tga.broadcast_shapes('t0',)": "RuntimeError, not TypeError",
    "tga.broadcast_to('t23', -1)": "TypeError, not InvalidArgumentError",
    "tga.broadcast_to('t23', 0)": "TypeError, not InvalidArgumentError",
    "tga.broadcast_to('t23', 0, 0)": "TypeError, not InvalidArgumentError",
    "tga.broadcast_to('t23', 2)": "TypeError, not InvalidArgumentError",
    "tga.broadcast_to('t23', 5)": "TypeError, not InvalidArgumentError",
    "tga.celu('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "tga.celu('t23', 0, 0)": "TypeError, not RuntimeError",
    "tga.constant_pad_nd('t23', 'a')": "TypeError, not ValueError",
    "tga.constant_pad_nd('t23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.constant_pad_nd('tix', 't23')": "TypeError, not InvalidArgumentError",
    "tga.count_nonzero('t23', 0, 0)": "TypeError, not AxisRuleError",
    "tga.dsplit('t23', 0, 'tix')": "TypeError, not RuntimeError",
    "tga.dsplit('t23', 0, 0)": "TypeError, not RuntimeError",
    "tga.expand_copy('t23', -1)": "TypeError, not InvalidArgumentError",
    "tga.expand_copy('t23', 0)": "TypeError, not InvalidArgumentError",
    "tga.expand_copy('t23', 2)": "TypeError, not InvalidArgumentError",
    "tga.expand_copy('t23', 5)": "TypeError, not InvalidArgumentError",
    "tga.fill_('t23', 'a')": "TypeError, not ValueError",
    "tga.fill_('t23', (2, 3))": "TypeError, not InvalidArgumentError",
    # one function serves torch.flip and Tensor.flip, whose method takes one int; the free one refuses it
    "tga.flip('t23', 0, 0)": "TypeError, not AxisRuleError",
    # one function serves torch.flip and Tensor.flip, whose method takes one int; the free one refuses it
    "tga.flip('t23', 2)": "TypeError, not DimensionError",
    # one function serves torch.flip and Tensor.flip, whose method takes one int; the free one refuses it
    "tga.flip('t23', 5)": "TypeError, not DimensionError",
    "tga.full('t23', 't23', 't23')": "TypeError, not ValueError",
    "tga.full('t23', 0, 'tix')": "TypeError, not ValueError",
    "tga.get_device('a',)": "TypeError, not RuntimeError",
    "tga.get_device(3,)": "TypeError, not CudaUnavailableError",
    "tga.get_device([1, 2],)": "TypeError, not RuntimeError",
    "tga.histogram('t23', 'a')": "TypeError, not ValueError",
    "tga.histogramdd('t23', 'a')": "TypeError, not RuntimeError",
    "tga.histogramdd('t23', 't23')": "TypeError, not RuntimeError",
    "tga.hsplit('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "tga.index_put('t23', 't23', 't23')": "TypeError, not IndexError",
    "tga.index_put('t23', 0, 'tix')": "TypeError, not RuntimeError",
    "tga.index_put_('t23', 't23', 't23')": "TypeError, not IndexError",
    "tga.index_put_('t23', 0, 'tix')": "TypeError, not RuntimeError",
    "tga.index_put_('t23', 0, 0)": "TypeError, not RuntimeError",
    "tga.layer_norm('t0',)": "TypeError, not InvalidArgumentError",
    "tga.layer_norm('t23', 't0')": "TypeError, not InvalidArgumentError",
    "tga.layer_norm('t23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.layer_norm('t23', 't23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.layer_norm('t23', -1)": "TypeError, not InvalidArgumentError",
    "tga.layer_norm('t23', 0)": "TypeError, not InvalidArgumentError",
    "tga.layer_norm('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "tga.layer_norm('t23', 2)": "TypeError, not InvalidArgumentError",
    "tga.layer_norm('t23', 5)": "TypeError, not InvalidArgumentError",
    "tga.layer_norm('tix', 't23')": "TypeError, not InvalidArgumentError",
    "tga.masked_fill('t23', 't23', 't23')": "RuntimeError, not TypeError",
    "tga.norm('t23', 'a')": "RuntimeError, not ValueError",
    "tga.normal('t23', 'a')": "TypeError, not ValueError",
    "tga.nuclear_norm('t23', -1)": "RuntimeError, not TypeError",
    "tga.nuclear_norm('t23', 0)": "RuntimeError, not TypeError",
    "tga.nuclear_norm('t23', 2)": "IndexError, not TypeError",
    "tga.nuclear_norm('t23', 5)": "IndexError, not TypeError",
    "tga.pca_lowrank('t0',)": "ValueError, not RuntimeError",
    "tga.pca_lowrank('t23', 't0')": "ValueError, not TypeError",
    "tga.permute('t23', -1)": "TypeError, not InvalidArgumentError",
    "tga.permute('t23', 0)": "TypeError, not InvalidArgumentError",
    "tga.permute('t23', 0, 0)": "TypeError, not AxisRuleError",
    "tga.permute('t23', 2)": "TypeError, not InvalidArgumentError",
    "tga.permute('t23', 5)": "TypeError, not InvalidArgumentError",
    "tga.permute_copy('t23', -1)": "TypeError, not InvalidArgumentError",
    "tga.permute_copy('t23', 0)": "TypeError, not InvalidArgumentError",
    "tga.permute_copy('t23', 2)": "TypeError, not InvalidArgumentError",
    "tga.permute_copy('t23', 5)": "TypeError, not InvalidArgumentError",
    "tga.randint_like('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "tga.repeat_interleave('t0',)": "NotImplementedError, not TypeError",
    "tga.repeat_interleave('t23', 'a')": "TypeError, not ValueError",
    "tga.repeat_interleave('t23', (2, 3))": "TypeError, not ValueError",
    "tga.repeat_interleave('t23', -1)": "RuntimeError, not ValueError",
    "tga.repeat_interleave('t23',)": "NotImplementedError, not TypeError",
    "tga.repeat_interleave('tb',)": "NotImplementedError, not TypeError",
    "tga.repeat_interleave('te',)": "NotImplementedError, not TypeError",
    "tga.repeat_interleave('ti',)": "RuntimeError, not TypeError",
    # one function serves torch.reshape and Tensor.reshape, whose method takes one int
    "tga.reshape('t23', 0)": "TypeError, not InvalidArgumentError",
    # one function serves torch.reshape and Tensor.reshape, whose method takes one int
    "tga.reshape('t23', 0, 0)": "TypeError, not InvalidArgumentError",
    # one function serves torch.reshape and Tensor.reshape, whose method takes one int
    "tga.reshape('t23', 2)": "TypeError, not InvalidArgumentError",
    # one function serves torch.reshape and Tensor.reshape, whose method takes one int
    "tga.reshape('t23', 5)": "TypeError, not InvalidArgumentError",
    "tga.rms_norm('t23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.rms_norm('t23', 't23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.rms_norm('t23', -1)": "TypeError, not InvalidArgumentError",
    "tga.rms_norm('t23', 0)": "TypeError, not InvalidArgumentError",
    "tga.rms_norm('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "tga.rms_norm('t23', 2)": "TypeError, not InvalidArgumentError",
    "tga.rms_norm('t23', 5)": "TypeError, not InvalidArgumentError",
    "tga.roll('t23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.roll('tix', 't23')": "TypeError, not InvalidArgumentError",
    "tga.rsub('t23', 't23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.rsub('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "tga.scatter('t23', 0, 'tix')": "TypeError, not IndexRangeError",
    "tga.searchsorted('t23', 'a')": "TypeError, not RuntimeError",
    "tga.searchsorted('t23', (2, 3))": "TypeError, not RuntimeError",
    "tga.searchsorted('t23', None)": "TypeError, not RuntimeError",
    "tga.split('t23', 'a')": "TypeError, not ValueError",
    "tga.split('t23', 't23')": "TypeError, not InvalidArgumentError",
    "tga.split('tix', 't23')": "TypeError, not InvalidArgumentError",
    "tga.squeeze('t23', 0, 0)": "TypeError, not AxisRuleError",
    "tga.std('tix', 't23')": "TypeError, not RuntimeError",
    "tga.svd_lowrank('t0',)": "ValueError, not RuntimeError",
    "tga.tensor('a',)": "TypeError, not ValueError",
    "tga.tensor(None,)": "RuntimeError, not TypeError",
    "tga.tensor_split('t23', 'a')": "TypeError, not ValueError",
    "tga.tensordot('t23', 0, 'tix')": "AssertionError, not TypeError",
    # one function serves torch.tile and Tensor.tile, whose method takes one int; the free one refuses it
    "tga.tile('t23', -1)": "TypeError, not InvalidArgumentError",
    # one function serves torch.tile and Tensor.tile, whose method takes one int; the free one refuses it
    "tga.tile('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "tga.unravel_index('tix', 't23')": "TypeError, not InvalidArgumentError",
    "tga.var('tix', 't23')": "TypeError, not RuntimeError",
    # view_copy is Tensor.view's copy, which takes one int; PyTorch's free view_copy refuses it
    "tga.view_copy('t23', 0)": "TypeError, not InvalidArgumentError",
    # view_copy is Tensor.view's copy, which takes one int; PyTorch's free view_copy refuses it
    "tga.view_copy('t23', 2)": "TypeError, not InvalidArgumentError",
    # view_copy is Tensor.view's copy, which takes one int; PyTorch's free view_copy refuses it
    "tga.view_copy('t23', 5)": "TypeError, not InvalidArgumentError",
    "tga.vsplit('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "tile('t23', 0, 't23')": "TypeError, not InvalidArgumentError",
    "tile('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "tile('t23', 0, 'tix', 't23')": "TypeError, not InvalidArgumentError",
    "to('t23', (2, 3))": "TypeError, not RuntimeError",
    "to('t23', [])": "TypeError, not RuntimeError",
    "type('t23', 't0')": "TypeError, not ValueError",
    "type('t23', 't23')": "TypeError, not ValueError",
    "type('t23', 'te')": "TypeError, not ValueError",
    "type('t23', 'ti')": "TypeError, not ValueError",
    "unflatten('t23', 0, 0)": "RuntimeError, not TypeError",
    "unsafe_split_with_sizes('t0', 0)": "TypeError, not AxisRuleError",
    "vsplit('t23', 0, 't23')": "TypeError, not InvalidArgumentError",
    "vsplit('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "vsplit('t23', 0, 'tix', 't23')": "TypeError, not InvalidArgumentError",
    "where('t23', 0, 't23')": "TypeError, not InvalidArgumentError",
    "where('t23', 0, 'tix')": "TypeError, not InvalidArgumentError",
    "where('t23', 0, 0)": "TypeError, not InvalidArgumentError",
}
