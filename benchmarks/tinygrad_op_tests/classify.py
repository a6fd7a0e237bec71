"""Classify the failures of tinygrad's test_ops.py run against tinygrad_attn through the import shim."""

import collections
import re

rows = [l.split("\t") for l in open("./results.tsv").read().splitlines()]
# (a) the test asserts tinygrad's own semantics where PyTorch's differ, or calls API only tinygrad has
A = [
    (
        "a1 int32 is tinygrad's default int (torch side cast to int32; PyTorch's is int64)",
        r"dtype mismatch: tinygrad=\w+ \| torch=int32",
    ),
    ("a2 Tensor.dot is tinygrad's matmul (torch.dot is 1-D only)", r"dot: needs two 1-D"),
    (
        "a3 tinygrad-only names/keywords (no PyTorch counterpart)",
        r"sparse_categorical|binary_crossentropy|quick_gelu|kaiming|bitcast|'normal'|'lshift'|'rshift'|detect_positive|argument 'size'|argument 'padding'|not 'tuple'|not 'NoneType'|full_like\(\) missing|data type '' not understood|missing the dim to run along|randint\(\) takes|has no attribute 'max'|'device'|'cast'",
    ),
    (
        "a5 tinygrad-only argument forms PyTorch rejects (4-tuple conv/pool padding, negative conv padding, mode='linear' on 4-D/5-D input)",
        r"padding must be an int or a tuple of \d ints, got \(\d+, \d+, \d+, \d+|negative padding|mode 'linear' needs 3-D input",
    ),
    (
        "a4 tinygrad-only numerics/semantics (max(dim) giving values only, IndexError for a[..., ...] which PyTorch accepts, gradients without requires_grad, float index, uint wrap, TypeError for scatter reduce, nan-free exp ratio, error text)",
        r"does not require grad and has no graph|index must be an integer tensor|4294967295|scatter_add: axis 1 is out of range|nan != 0.0|'ValuesIndices' object has no attribute 'realize'|\"single ellipsis\" does not match",
    ),
]
B = [
    (
        "b1 conv/pool/interpolate/unpool not yet as PyTorch (conv3d, avg_pool3d, max_unpool2d, int max_pool, ...)",
        r"conv|max_pool|avg_pool|interpolate|max_unpool",
    ),
    ("b2 scaled_dot_product_attention attn_mask=/enable_gqa= (semantics issue)", r"scaled_dot_product_attention"),
    ("b3 var/std axis= is NumPy's population variance here (semantics issue)", r"var_axis|std_axis|var_one|std_one"),
    (
        "b4 squeeze of a non-1 dim, int beside index arrays, error classes IndexError/RuntimeError (semantics issue)",
        r"squeeze|dim_collapse_int|test_cat|test_stack|cross_entropy_class",
    ),
    ("b5 Tensor.unfold missing", r"unfold"),
    ("b6 std_mean missing (PyTorch has torch.std_mean)", r"std_mean"),
]
out = collections.defaultdict(list)
for name, st, msg in rows:
    if st != "fail":
        out[st].append(name)
        continue
    text = name + " " + msg
    for label, rx in A + B:
        if re.search(rx, text):
            out[label].append(name)
            break
    else:
        out["unclassified"].append(name + "  " + msg[:120])
total = len(out["pass"]) + sum(len(v) for k, v in out.items() if k not in ("pass", "skip"))
a = sum(len(v) for k, v in out.items() if k.startswith("a"))
for k in sorted(out):
    print(f"{len(out[k]):4d}  {k}")
print(
    f"run (not skipped): {total}; class a: {a}; passed {len(out['pass'])} / ({total} - {a}) = {len(out['pass']) / (total - a):.1%}"
)
for n in out["unclassified"]:
    print("   ", n)
