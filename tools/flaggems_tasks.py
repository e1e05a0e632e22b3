#!/usr/bin/env python3
"""Writes FlagGems' library-backed tasks: for each ATen operator FlagGems registers whose
implementation it exports at the top level (`flag_gems.<fn>`), a task file (the reference
`Model` is the ATen call, `torch.ops.aten.<op>.<overload>(...)`) and an implementation file
(`return flag_gems.<fn>(...)`, the call ATen's dispatcher makes), plus the job manifest.

    tools/flaggems_tasks.py --src jobs/flaggems/src [--tests DIR] \\
        [--out jobs/flaggems/tasks] [--manifest jobs/flaggems_library.json]

FlagGems is read as source, never imported: the (aten op, function) pairs come from the
`_FULL_CONFIG` table of `flag_gems/__init__.py`; each op's arguments from this torch's schema
of the overload; the tensors' shape and dtypes from FlagGems' own test of the op
(`tests/test_<op>.py`: the first `shape` and `dtype` lists it is parametrised with, written as
`utils.<NAME>` of `tests/accuracy_utils.py`, as the test file's own constants (the full branch
of `if cfg.QUICK_MODE:`) or as literal lists of `torch.<dtype>`) when --tests is given, else a
pointwise default; torch.linalg's decompositions keep float32 (torch has no half-precision
LU or SVD). Where the test computes the reference in float32 for float16/bfloat16, the task
does too; a polynomial's degree is a whole number; svd's task asks for no singular vectors
(compute_uv=False: zero-filled U and V) and linalg_svd has none (singular vectors are unique only
up to sign). Operators left
out (in-place and out= overloads, backward ops, factories, random ops, arguments with no
mechanical value) are listed with the reason in the output folder's INDEX.md.
"""
import argparse
import ast
import json
import os
import sys
import textwrap

from override_manifest import compact_json

DEFAULT_SHAPE = (20, 320, 15)
DEFAULT_DTYPES = ("float16", "float32", "bfloat16")
HALF_DTYPES = ("float16", "bfloat16")
DTYPE_LISTS = {"FLOAT_DTYPES": DEFAULT_DTYPES, "PRIMARY_FLOAT_DTYPES": ("float16", "float32"),
               "ALL_FLOAT_DTYPES": DEFAULT_DTYPES, "INT_DTYPES": ("int16", "int32"),
               "ALL_INT_DTYPES": ("int16", "int32", "int64"), "BOOL_TYPES": ("bool",)}
KNOWN_DTYPES = {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool"}
# torch.linalg's decompositions take float32/float64 (and complex) only: no half-precision case.
LINALG_DTYPES = ("float32",)
# TORCH_IN_LIBRARY functions that launch no kernel of the library: ATen does all of it.
NO_LIBRARY_KERNEL = {"ldl_factor_ex"}
QUANTIZED_INPUT = {"dequantize", "int_repr", "q_scale", "q_zero_point", "q_per_channel_scales"}
RANDOM = {"bernoulli", "dropout", "native_dropout", "normal", "rand", "rand_like", "randn", "randn_like",
          "randint", "randint_like", "randperm", "multinomial", "uniform", "exponential", "poisson",
          "alpha_dropout", "feature_dropout", "rrelu", "rrelu_with_noise", "geometric", "log_normal", "cauchy"}
# Operators whose outputs are unique only up to sign (singular vectors): no element-wise comparison
# with ATen's can judge them, so no task (FlagGems' own test compares the reconstruction).
SIGN_FREE_OUTPUTS = {
    "linalg_svd": "its singular vectors are unique only up to sign, which no element-wise comparison can judge "
                  "(linalg_svdvals' task compares the singular values; svd's takes compute_uv=False)",
}
# Arguments set against the schema's default: svd without singular vectors (they are
# unique only up to sign); a unique's every output, so each is a defined tensor to compare (ATen
# returns empty placeholders for the outputs not asked for).
ARGUMENT_VALUES = {"compute_uv": False, "return_inverse": True, "return_counts": True}
ARGUMENT_REASONS = {"compute_uv": "no singular vectors, which are unique only up to sign (U and V are then "
                                  "zero-filled, as torch.svd documents, and compared as such)",
                    "return_inverse": "every output a defined tensor to compare",
                    "return_counts": "every output a defined tensor to compare"}
# Tasks whose failure on a device is attributed (docs/LIBRARIES.md, the tenth to twelfth runs),
# tagged so in the manifest (tools/tag_check.py reads a night against the tags): task -> (tag,
# FlagGems' line and what).
DEVICE_FINDINGS = {
    "norm_scalar": ("library-defect", "flag_gems/ops/norm.py:324 (out.squeeze(dim=None), torch's named-dimension "
                                      "overload, raises for every input)"),
    "norm_scalaropt_dim": ("library-defect", "flag_gems/ops/norm.py:266, :322 (p=None, ATen's 2-norm, reaches "
                                             "v_norm_kernel as ord=None, which does not compile)"),
    "var": ("library-defect", "flag_gems/ops/var.py:135-140 (registered for aten::var(Tensor, bool unbiased) with "
                              "var.correction's signature: unbiased becomes dim)"),
    "var_dim": ("library-defect", "flag_gems/ops/var.py:175 (registered for aten::var.dim with var.correction's "
                                  "keyword-only signature)"),
    "zero": ("library-defect", "flag_gems/ops/zero.py:53, :73 (the functional aten::zero zeroes its input in place)"),
    "ldl_factor": ("torch-in-library", "flag_gems/ops/linalg_ldl_factor.py:200 ((A + A.mT) / 2 in torch, runtime "
                                       "type 3)"),
    "special_gammainc": ("library-defect", "flag_gems/ops/special_gammainc.py:120, :173 (the functional op launches "
                                           "into its out=None)"),
    "special_digamma": ("library-defect", "flag_gems/ops/digamma_.py:152 (no pole branch in the reflection)"),
    "special_modified_bessel_k0": ("library-defect", "flag_gems/ops/special_modified_bessel_k0.py:97-107 (the large-x "
                                                     "polynomial, off by up to 2.1e-3 on (2, 3])"),
    "special_modified_bessel_k1": ("library-defect", "flag_gems/ops/special_modified_bessel_k1.py:61 (5/6 for 5/4 "
                                                     "in the series), :74-87 (a 4% asymptotic blend)"),
    "special_chebyshev_polynomial_v": ("library-defect", "flag_gems/ops/special_chebyshev_polynomial_v.py:31-34 "
                                                         "(acos: NaN for |x| > 1)"),
    "special_shifted_chebyshev_polynomial_t": ("library-defect", "flag_gems/ops/special_shifted_chebyshev_polynomial"
                                                                 "_t.py:40-44 (2x - 1 clamped to [-1, 1])"),
    "special_shifted_chebyshev_polynomial_u": ("library-defect", "flag_gems/ops/special_shifted_chebyshev_polynomial"
                                                                 "_u.py:41-42, :65 (2x - 1 clamped to [-1, 1])"),
    "svd": ("library-defect", "flag_gems/ops/svd.py:3424-3427 (compute_uv=False returns torch.empty U and V, "
                              "where torch documents zeros)"),
    "addbmm": ("reference-suspect", "float16 and bfloat16: the CPU golden's half-precision rounding; A/B "
                                    "reference_suspect"),
}
# Inputs in the domain where the op is defined (the rest are torch.randn).
INIT_BY_OP = {
    **{op: "positive" for op in ("log", "log2", "log10", "sqrt", "rsqrt", "lgamma", "digamma", "polygamma",
                                 "reciprocal", "pow", "float_power", "xlogy", "special_xlog1py")},
    **{op: "unit" for op in ("acos", "asin", "atanh", "arccos", "arcsin", "arctanh", "erfinv", "logit")},
    "acosh": "above_one", "arccosh": "above_one", "log1p": "positive",
}
# A polynomial's degree `n` (special_*_polynomial_*(x, n)): whole numbers 0-9, as FlagGems' tests
# give it. ATen truncates any real n and returns 0 below 0; random reals would test that
# convention, not the polynomials (the eleventh device run: most of the Chebyshev cases' failures).
DEGREE_ARGUMENT = "n"
# Operators whose tensors are not all of one shape: their tensors, by the schema's argument names.
SHAPED = {
    "mm": {"self": (64, 96), "mat2": (96, 48)},
    "bmm": {"self": (4, 64, 96), "mat2": (4, 96, 48)},
    "addmm": {"self": (64, 48), "mat1": (64, 96), "mat2": (96, 48)},
    "baddbmm": {"self": (4, 64, 48), "batch1": (4, 64, 96), "batch2": (4, 96, 48)},
    "addbmm": {"self": (64, 48), "batch1": (4, 64, 96), "batch2": (4, 96, 48)},
    "mv": {"self": (64, 96), "vec": (96,)},
    "addmv": {"self": (64,), "mat": (64, 96), "vec": (96,)},
    "outer": {"self": (64,), "vec2": (48,)},
    "addr": {"self": (64, 48), "vec1": (64,), "vec2": (48,)},
    "dot": {"self": (4096,), "tensor": (4096,)},
    "vdot": {"self": (4096,), "other": (4096,)},
    "kron": {"self": (8, 6), "other": (5, 7)},
    "dist": {"self": (64, 96), "other": (64, 96)},
    "cdist": {"x1": (8, 64, 16), "x2": (8, 48, 16)},
    "linear": {"input": (64, 96), "weight": (48, 96), "bias": (48,)},
}


# Views and metadata queries: the output aliases the input or is a number, nothing for a kernel to do.
VIEW_OPS = {"alias", "expand", "expand_as", "flatten", "unflatten", "lift", "unbind", "unsqueeze", "squeeze",
            "view", "view_as", "permute", "transpose", "t", "narrow", "select", "detach", "as_strided", "real",
            "imag", "split", "chunk", "diagonal", "movedim", "resolve_conj", "resolve_neg", "sym_size", "sym_stride",
            "sym_numel", "sym_storage_offset", "view_as_complex", "view_as_real"}
# Data movement only (the judge compares bitwise, the lint allows kernels that only copy or fill).
NON_COMPUTE = {"alias_copy", "t_copy", "chalf", "diag_embed", "diagonal_copy", "fill_scalar", "lift_fresh", "lift_fresh_copy",
               "ones_like", "zeros_like", "zero", "resize_as", "rot90", "slice_scatter", "squeeze_copy", "tril",
               "triu"}
# Operators whose FlagGems code path computes with torch (the static lint's type 3, expected):
# function -> where (FlagGems' file and line) and what.
TORCH_IN_LIBRARY = {
    "argsort": "flag_gems/ops/sort.py:292 (torch.cumsum of the radix sort's bin histogram)",
    "sort": "flag_gems/ops/sort.py:292 (torch.cumsum of the radix sort's bin histogram)",
    "mode": "flag_gems/ops/sort.py:292 (through its sort: torch.cumsum of the radix sort's bin histogram)",
    "binary_cross_entropy_with_logits": "flag_gems/ops/binary_cross_entropy_with_logits.py:116 (out.mean(), the "
                                        "mean reduction ATen's default asks for)",
    "margin_ranking_loss": "flag_gems/ops/margin_ranking_loss.py:203-227 (out.sum()/out.mean() reductions) and :172 "
                           "(torch.ops.aten.margin_ranking_loss for tensors off the device)",
    "histc": "flag_gems/ops/histc.py:149-157 (inp.min()/inp.max() and a torch count when min = max = 0, the default: "
             "the range comes from the data)",
    "isin": "flag_gems/ops/isin.py:227 and flag_gems/ops/unique.py:795 (torch.sort of the test elements)",
    "nonzero": "flag_gems/ops/nonzero.py:74 (the prefix sum by the tensor method cumsum)",
    "ldl_factor_ex": "flag_gems/ops/ldl_factor_ex.py:91 (torch.ops.aten.linalg_ldl_factor_ex.out: ATen's own "
                     "factorisation, no kernel of the library)",
    "nonzero_numpy": "flag_gems/ops/nonzero.py:74 (the prefix sum by the tensor method cumsum)",
    "nanmedian": "flag_gems/ops/nanmedian.py:895-958 (the kthvalue fallback: torch.where, isnan, kthvalue, sort) and "
                 ":1260 (torch.sort)",
    "nanmedian_dim": "flag_gems/ops/nanmedian.py:895-958 (the kthvalue fallback: torch.where, isnan, kthvalue, sort)",
    "unique_dim": "flag_gems/ops/unique_dim.py:539-845 (torch.sort, cat, cumsum, nonzero)",
    "linalg_lstsq": "flag_gems/ops/linalg_lstsq.py:575-957 (torch.cat) and :1238 (torch.linalg.lstsq)",
    "special_chebyshev_polynomial_u": "flag_gems/ops/special_chebyshev_polynomial_u.py:100-101 (n.amin()/n.amax(), "
                                      "the degree range check)",
    "special_hermite_polynomial_h": "flag_gems/ops/special_hermite_polynomial_h.py:110-111 (n.min()/n.max(), the "
                                    "degree range check)",
    "special_shifted_chebyshev_polynomial_w": "flag_gems/ops/special_shifted_chebyshev_polynomial_w.py:99-102 "
                                              "(torch.any, n.max(): the degree range check)",
    "conv1d": "flag_gems/ops/conv2d.py:401-410 (torch.nn.functional.pad of the channels up to 16)",
    "gcd": "flag_gems/ops/gcd.py:189 (torch.gcd building the int16 lookup table; int16 inputs only)",
    "cumprod": "flag_gems/ops/cumprod.py:398-408 (torch.ops.aten.cumprod redispatched to ATen for bool inputs and on "
               "Ascend; not taken for these inputs, but the lint cannot know the dtype or vendor)",
    "mul": "flag_gems/ops/mul.py:590, :735 (torch.ops.aten.mul redispatched to ATen for tensors off the device; not "
           "taken here, but the lint cannot know the device)",
    "multiply": "flag_gems/ops/mul.py:590, :735 (through mul: torch.ops.aten.mul redispatched to ATen for tensors "
                "off the device)",
    "fix": "flag_gems/ops/fix.py:85 (torch.trunc for complex inputs; not taken for real ones, but the lint cannot "
           "know the dtype)",
    "special_log1p": "flag_gems/ops/special_log1p.py:39 (torch.log when the argument is not a tensor; not taken for "
                     "a tensor, but the lint cannot know the argument's type)",
    "soft_margin_loss": "flag_gems/ops/soft_margin_loss.py:163 (tmp_sum / float(n_elements): the mean by torch "
                        "division, runtime type 3 on the device, and the lint's since it judges arithmetic on the "
                        "tensors a launcher makes)",
    "linalg_svdvals": "flag_gems/ops/linalg_svdvals.py:55-56 (ATen's linalg_svdvals through getattr(torch.ops, "
                      "'aten') when its SVD raises NotImplementedError)",
}


class Skip(Exception):
    """An operator with no mechanical task: the reason goes into INDEX.md."""


def registrations(src):
    """[(aten name, overload, function name)] of `_FULL_CONFIG` in flag_gems/__init__.py, in order."""
    path = os.path.join(src, "flag_gems", "__init__.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_FULL_CONFIG" for t in node.targets):
            out = []
            for item in node.value.elts:
                if isinstance(item, ast.Tuple) and len(item.elts) >= 2 and isinstance(item.elts[1], ast.Name):
                    name, _, overload = item.elts[0].value.partition(".")
                    out.append((name, overload, item.elts[1].id))
            return out
    raise SystemExit(f"flaggems_tasks: {path} has no _FULL_CONFIG table")


def not_functional(name, overload):
    """Why (name, overload) is not a functional forward operator, or None."""
    if name.endswith("_") and not name.endswith("__"):
        return "in-place overload"
    if any(part.lower().startswith("out") for part in overload.split("_")):  # out, values_out, OutScalar_Self
        return "out= overload"
    if "backward" in name or name.startswith("__") or name.startswith("_"):
        return "backward, dunder or internal operator"
    if name in RANDOM:
        return "random operator (its output is not comparable)"
    if name in VIEW_OPS:
        return "a view or metadata query (nothing for a kernel to compute or move)"
    if name in QUANTIZED_INPUT:
        return "its input is a quantized tensor, which this generator does not build"
    if name in SIGN_FREE_OUTPUTS:
        return SIGN_FREE_OUTPUTS[name]
    return None


def accuracy_constants(tests):
    """NAME -> value of accuracy_utils.py's tuple/list literals of shapes (the non-quick branch)."""
    path = os.path.join(tests, "accuracy_utils.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value.orelse if isinstance(node.value, ast.IfExp) else node.value
            try:
                out[node.targets[0].id] = ast.literal_eval(value)
            except ValueError:
                continue
    return out


def literal(node, constants, local):
    """The value of a parametrisation's list: literals, `torch.<dtype>` (its name), FlagGems'
    `utils.<NAME>` (accuracy_utils.py's shapes, DTYPE_LISTS' dtypes), the test file's own
    constants (`local`). ValueError for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        values = []
        for element in node.elts:  # (*utils.FLOAT_DTYPES, torch.float64): the list spliced in
            if isinstance(element, ast.Starred):
                values += list(literal(element.value, constants, local))
            else:
                values.append(literal(element, constants, local))
        return tuple(values) if isinstance(node, ast.Tuple) else values
    if isinstance(node, ast.ListComp):
        return comprehension(node, constants, local)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.value.id == "torch":
            return node.attr
        if node.attr in DTYPE_LISTS:
            return list(DTYPE_LISTS[node.attr])
        if node.attr in constants:
            return constants[node.attr]
    if isinstance(node, ast.Name) and node.id in local:
        return local[node.id]
    raise ValueError(ast.dump(node)[:80])


def comprehension(node, constants, local):
    """`[d for d in LIST if d in (...)]` (or `not in`), as a test narrows a dtype list: the
    elements of LIST the conditions keep. ValueError for any other comprehension."""
    if len(node.generators) != 1 or not isinstance(node.elt, ast.Name):
        raise ValueError("comprehension")
    loop = node.generators[0]
    if not (isinstance(loop.target, ast.Name) and loop.target.id == node.elt.id) or loop.is_async:
        raise ValueError("comprehension")
    values = list(literal(loop.iter, constants, local))
    for condition in loop.ifs:
        if not (isinstance(condition, ast.Compare) and isinstance(condition.left, ast.Name)
                and condition.left.id == node.elt.id and len(condition.ops) == 1
                and isinstance(condition.ops[0], (ast.In, ast.NotIn))):
            raise ValueError("comprehension condition")
        among = list(literal(condition.comparators[0], constants, local))
        keep = isinstance(condition.ops[0], ast.In)
        values = [v for v in values if (v in among) == keep]
    return values


def file_constants(tree, constants):
    """NAME -> value of a test file's own top-level lists (in `if cfg.QUICK_MODE: ... else:
    ...`, the full branch, as accuracy_constants reads), and of the names it imports from
    accuracy_utils (`from .accuracy_utils import FLOAT_DTYPES, REDUCTION_SHAPES`)."""
    local = {}
    body = []
    for node in tree.body:
        body += node.orelse if isinstance(node, ast.If) else [node]
    for node in body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "accuracy_utils":
            for alias in node.names:
                if alias.name in DTYPE_LISTS:
                    local[alias.asname or alias.name] = list(DTYPE_LISTS[alias.name])
                elif alias.name in constants:
                    local[alias.asname or alias.name] = constants[alias.name]
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                local[node.targets[0].id] = literal(node.value, constants, local)
            except ValueError:
                continue
    return local


def source_name(node):
    """How a parametrisation's list is written, for INDEX.md: utils.NAME, NAME or a literal."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "utils":
        return f"utils.{node.attr}"
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node)[:60]


def test_parameters(path, tree, constants):
    """(shape, dtypes, where) from the parametrisation of FlagGems' test file (test_file's
    path and tree; its first `shape` and `dtype` lists that can be read), or None."""
    if tree is None:
        return None
    local = file_constants(tree, constants)
    found = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize" and len(node.args) == 2):
            continue
        key = getattr(node.args[0], "value", None)
        if key not in ("shape", "dtype") or key in found:
            continue
        listed = node.args[1]
        while isinstance(listed, ast.BinOp):  # utils.INT_DTYPES + utils.BOOL_TYPES: the first list
            listed = listed.left
        try:
            value = literal(listed, constants, local)
        except ValueError:
            continue
        if key == "dtype":
            value = [d for d in value if d in KNOWN_DTYPES] if isinstance(value, list) else []
        if value:
            found[key] = (value, source_name(listed))
    if not found:
        return None
    shape = pick_shape(found["shape"][0]) if "shape" in found else DEFAULT_SHAPE
    dtypes = tuple(found["dtype"][0]) if "dtype" in found else DEFAULT_DTYPES
    where = f"tests/{os.path.basename(path)}: " + ", ".join(found[k][1] for k in ("shape", "dtype") if k in found)
    return shape, dtypes, where


def test_file(tests, names):
    """(path, parsed tree) of FlagGems' tests/test_<name>.py for the first of `names` that has
    one, else (None, None)."""
    paths = [os.path.join(tests, f"test_{name}.py") for name in names]
    path = next((p for p in paths if os.path.exists(p)), None)
    if path is None:
        return None, None
    with open(path, encoding="utf-8") as f:
        return path, ast.parse(f.read(), path)


def reference_in_float32(tree):
    """Whether FlagGems' test of the op (test_file's tree, or None) computes its reference in
    float32 and casts it back (`torch.special.airy_ai(ref_inp.float()).to(dtype)`): torch has
    no float16/bfloat16 kernel of such an op, or not on every device. The task's reference then
    does the same for those dtypes."""
    for node in ast.walk(tree) if tree is not None else ():
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"
                and isinstance(node.func.value, ast.Call)
                and any(isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and a.func.attr == "float"
                        and not a.args for a in node.func.value.args)):
            return True
    return False


def pick_shape(shapes):
    """The smallest shape of the list with at least 4096 elements (else the largest)."""
    def numel(shape):
        count = 1
        for d in shape:
            count *= d
        return count
    tuples = [tuple(s) for s in shapes if isinstance(s, (tuple, list)) and all(isinstance(d, int) for d in s)]
    if not tuples:
        return DEFAULT_SHAPE
    big = sorted((numel(s), s) for s in tuples if numel(s) >= 4096)
    return big[0][1] if big else max(tuples, key=numel)


def schema_of(name, overload):
    import torch
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        raise Skip("this torch has no such ATen operator")
    op = getattr(packet, overload or "default", None)
    if op is None:
        raise Skip(f"this torch has no overload {overload or 'default'}")
    return op._schema


def argument_value(arg, op, index):
    """('tensor', shape or None) for a tensor argument, ('literal', python value), or Skip."""
    kind = str(arg.type)
    if kind == "Tensor":
        return "tensor", SHAPED.get(op, {}).get(arg.name)
    if kind == "bool" and arg.name in ARGUMENT_VALUES:
        return "literal", ARGUMENT_VALUES[arg.name]
    if arg.has_default_value():
        return "literal", arg.default_value
    if arg.name == "dim" and kind in ("int", "Optional[int]"):
        return "literal", -1
    if arg.name == "dim" and kind in ("List[int]", "Optional[List[int]]"):  # sum.dim_IntList's int[1]? dim
        return "literal", [-1]
    if kind.startswith("Optional["):
        return "literal", None
    if kind == "bool":
        return "literal", False
    if kind in ("number", "float") and arg.name in ("other", "alpha", "exponent", "value", "min", "max", "scalar"):
        return "literal", 0.5 if op not in ("pow",) else 2.0
    raise Skip(f"argument {index} `{arg.name}: {kind}` has no mechanical value")


def plan(name, overload, fn, tests, constants):
    schema = schema_of(name, overload)
    if not any(str(a.type) == "Tensor" for a in schema.arguments):
        raise Skip("no tensor argument (a factory)")
    path, tree = test_file(tests, (fn, name)) if tests else (None, None)  # parsed once, read twice
    found = test_parameters(path, tree, constants)
    shape, dtypes, where = found or (DEFAULT_SHAPE, DEFAULT_DTYPES, "no FlagGems test read: default shape")
    if name.startswith("linalg_") or name in ("svd", "lu_unpack", "cholesky", "qr"):
        dtypes = tuple(d for d in dtypes if d in ("float32", "float64")) or LINALG_DTYPES
    args, tensors, degrees, notes = [], [], set(), []
    for index, arg in enumerate(schema.arguments):
        kind, value = argument_value(arg, name, index)
        note = argument_note(name, arg, value)
        notes += [note] if note else []
        if kind == "tensor":
            tensors.append((f"x{len(tensors)}", value or shape))
            if is_degree(name, arg):
                degrees.add(tensors[-1][0])
            value = tensors[-1][0]
        args.append((arg.name if arg.kwarg_only else None, kind, value))
    upcast = (any(d in HALF_DTYPES for d in dtypes) and len(schema.returns) == 1
              and str(schema.returns[0].type) == "Tensor" and reference_in_float32(tree))
    return {"name": fn, "op": name, "overload": overload or "default", "fn": fn, "args": args,
            "tensors": tensors, "dtypes": list(dtypes), "where": where, "init": INIT_BY_OP.get(name, "randn"),
            "degrees": sorted(degrees), "notes": notes,
            "upcast": upcast}


def is_degree(op, arg):
    """Whether the argument is a polynomial's degree tensor (DEGREE_ARGUMENT)."""
    return str(arg.type) == "Tensor" and "_polynomial_" in op and arg.name == DEGREE_ARGUMENT


def argument_note(op, arg, value):
    """The task's word on an argument the generator chose against the mechanical rule, or None."""
    if is_degree(op, arg):
        return f"The degree `{arg.name}` is a whole number 0-9, as in FlagGems' tests."
    if str(arg.type) == "bool" and arg.name in ARGUMENT_VALUES:
        return f"`{arg.name}={value}` against the schema's default: {ARGUMENT_REASONS[arg.name]}."
    return None


def call_text(callee, task, tensor="{}"):
    """The call's text; `tensor` formats each tensor argument's name."""
    parts = []
    for keyword, kind, value in task["args"]:
        text = tensor.format(value) if kind == "tensor" else repr(value)
        parts.append(f"{keyword}={text}" if keyword else text)
    return f"{callee}({', '.join(parts)})"


def input_expression(shape, init):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    if init == "positive":
        return f"(torch.rand(({dims})) + 0.5).to(dt)"
    if init == "unit":
        return f"(torch.rand(({dims})) * 1.8 - 0.9).to(dt)"
    if init == "above_one":
        return f"(torch.rand(({dims})) + 1.5).to(dt)"
    if init == "degree":
        return f"torch.randint(0, 10, ({dims})).to(dt)"
    return f"torch.randn(({dims})).to(dt)"


def integer_input(shape, dtype):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    if dtype == "bool":
        return f"torch.rand(({dims})) > 0.5"
    return f"torch.randint(-100, 100, ({dims}), dtype=dt)"


def task_source(task):
    params = ", ".join(t for t, _ in task["tensors"])
    integer = task["dtypes"][0] in ("bool", "int16", "int32", "int64")
    inputs = ",\n            ".join(integer_input(shape, task["dtypes"][0]) if integer
                                    else input_expression(shape, "degree" if t in task.get("degrees", ()) else task["init"])
                                    for t, shape in task["tensors"])
    cases = ", ".join(f'dict(dtype="{d}")' for d in task["dtypes"])
    aten = f"aten::{task['op']}" + ("" if task["overload"] == "default" else f".{task['overload']}")
    head = (f"FlagGems `{task['fn']}` ({aten}), library-backed: the reference is the ATen operator, the "
            f"implementation ({task['name']}_triton_impl.py) calls flag_gems.{task['fn']}. Written by "
            f"tools/flaggems_tasks.py; inputs from FlagGems' {task['where']}. Case parameters: dtype."
            + (" The reference computes float16 and bfloat16 inputs in float32 and casts back, as FlagGems' "
               "test does (torch has no half-precision kernel of it, or not on every device)."
               if task.get("upcast") else "")
            + "".join(" " + note for note in task.get("notes", ())))
    return f'''"""{chr(10).join(textwrap.wrap(head, 100))}{expectation_text(task)}"""
import torch
{constants_text(task)}
CASES = [{cases}]


class Model(torch.nn.Module):
    def forward(self, {params}):
{reference_text(task)}


def get_init_inputs():
    return []


def get_inputs(dtype="{task['dtypes'][0]}"):
    dt = getattr(torch, dtype)
    return [{inputs}]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
'''


def reference_text(task):
    """Model.forward's body: the ATen call; where FlagGems' test computes the reference in float32
    (reference_in_float32), that for float16/bfloat16 inputs, cast back to their dtype."""
    aten = f"torch.ops.aten.{task['op']}.{task['overload']}"
    plain = f"        return {call_text(aten, task)}"
    if not task.get("upcast"):
        return plain
    first = task["tensors"][0][0]
    return (f"        if {first}.dtype in (torch.float16, torch.bfloat16):  # in float32, as FlagGems' test "
            f"computes it\n            return {call_text(aten, task, '{}.float()')}.to({first}.dtype)\n{plain}")


def expectation_text(task):
    where = TORCH_IN_LIBRARY.get(task["fn"])
    if not where and task["name"] in DEVICE_FINDINGS:
        tag, where = DEVICE_FINDINGS[task["name"]]
        text = f"Fails on the device, attributed ({tag}, docs/LIBRARIES.md): {where}."
        return "\n\n" + "\n".join(textwrap.wrap(text, 100))
    if not where:
        return ""
    kind = lint_type(task)
    text = (f"Expected to fail the lint (type {kind}): FlagGems computes with torch on this path"
            + (", launching no kernel of its own" if kind == 2 else "") + f", {where}.")
    return "\n\n" + "\n".join(textwrap.wrap(text, 100))


def lint_type(task):
    """The lint's type for a TORCH_IN_LIBRARY function: 2 where no kernel of the library runs at
    all (the lint reports the lowest type), else 3."""
    return 2 if task["fn"] in NO_LIBRARY_KERNEL else 3


def constants_text(task):
    lines = []
    if task["fn"] in TORCH_IN_LIBRARY:
        lines += ['EXPECTED_ERROR_TYPE = "LintError"', f"EXPECTED_LINT_TYPE = {lint_type(task)}"]
    if task["fn"] in NON_COMPUTE:
        lines.append("NON_COMPUTE = True")
    return "\n" + "\n".join(lines) + "\n" if lines else ""


def impl_source(task):
    params = ", ".join(t for t, _ in task["tensors"])
    return f'''"""FlagGems `{task['fn']}`, library-backed: the call ATen's dispatcher makes to FlagGems'
registered function. Written by tools/flaggems_tasks.py."""
import torch
import flag_gems


class ModelNew(torch.nn.Module):
    def forward(self, {params}):
        return {call_text(f"flag_gems.{task['fn']}", task)}
'''


def reference_runs(task):
    """Skip unless the task's reference runs on its inputs here (float32 where swept, on the CPU):
    a schema's arguments filled mechanically may not fit the op (an index, a square matrix)."""
    import torch  # noqa: F401 - the task source's own import
    namespace = {}
    exec(compile(task_source(task), f"<{task['name']}_torch.py>", "exec"), namespace)  # our own generated text
    dtype = "float32" if "float32" in task["dtypes"] else task["dtypes"][0]
    try:
        namespace["Model"]()(*namespace["get_inputs"](dtype=dtype))
    except Exception as error:  # noqa: BLE001 - whatever the reference raises is the reason
        first = (str(error).splitlines() or [""])[0][:120].replace("|", "/")
        raise Skip(f"the reference does not run on the generated inputs ({type(error).__name__}: {first})")


def collect(src, tests):
    """(tasks, skipped: [(op, fn, reason)]): one task per function, its first functional overload."""
    constants = accuracy_constants(tests) if tests else {}
    tasks, skipped, done = [], [], set()
    for name, overload, fn in registrations(src):
        reason = not_functional(name, overload)
        if reason is None and fn in done:
            continue
        if reason is None:
            try:
                task = plan(name, overload, fn, tests, constants)
                reference_runs(task)
                tasks.append(task)
                done.add(fn)
                continue
            except Skip as why:
                reason = str(why)
        skipped.append((f"{name}.{overload}" if overload else name, fn, reason))
    return tasks, [s for s in skipped if s[1] not in done]


def index_text(tasks, skipped, src):
    lines = ["# FlagGems library-backed tasks (generated by tools/flaggems_tasks.py)", "",
             f"{len(tasks)} tasks, one per function FlagGems exports at the top level and registers for a",
             "functional ATen overload; the reference calls the ATen overload, the implementation",
             "`flag_gems.<function>` with the same arguments. Regenerate with",
             f"`tools/flaggems_tasks.py --src {src} --tests <FlagGems>/tests`.", "",
             "| task | ATen operator | inputs from |", "|---|---|---|"]
    lines += [f"| `{t['name']}` | `{t['op']}.{t['overload']}` | {t['where']} |" for t in tasks]
    lines += ["", f"## Not generated ({len(skipped)} registrations)", "", "| ATen overload | function | why |",
              "|---|---|---|"]
    lines += [f"| `{op}` | `{fn}` | {why} |" for op, fn, why in skipped]
    return "\n".join(lines) + "\n"


def manifest(tasks, out_dir, manifest_path):
    rel = os.path.relpath(out_dir, os.path.dirname(os.path.abspath(manifest_path)))
    return {"$schema": "../schemas/jobs.schema.json", "name": "flaggems_library",
            "description": "FlagGems (github.com/flagos-ai/FlagGems), library-backed: each implementation calls "
                           "flag_gems.<function> as ATen's dispatcher would, against the ATen operator; FlagGems' "
                           "source in jobs/flaggems/src (jobs/flaggems/src/README.md). Written by "
                           "tools/flaggems_tasks.py; docs/LIBRARIES.md.",
            "defaults": {"library": ["flag_gems"], "python_path": ["flaggems/src", "flaggems/adapter"], "impl_name": "triton_impl",
                         "timeout_s": 300, "seeds": 3, "lint": True, "runtime_checks": True,
                         "bench": {"enabled": False}, "tags": ["flaggems"]},
            "operators": [manifest_entry(t, rel) for t in tasks]}


def manifest_entry(task, rel):
    """The operator's entry; an attributed one's tag comes first, so that report.html, which
    groups operators by their first tag, shows the known failures apart from the rest."""
    entry = {"name": task["name"], "dir": rel, "sweep": {"dtype": task["dtypes"]}}
    if task["fn"] in TORCH_IN_LIBRARY:
        entry["tags"] = ["torch-in-library", "flaggems"]
    elif task["name"] in DEVICE_FINDINGS:
        entry["tags"] = [DEVICE_FINDINGS[task["name"]][0], "flaggems"]
    return entry


def remove_stale(out, names):
    """Files this tool wrote before for operators it no longer generates (never anyone else's)."""
    for entry in os.listdir(out):
        name = entry[:-len("_torch.py")] if entry.endswith("_torch.py") else \
            entry[:-len("_triton_impl.py")] if entry.endswith("_triton_impl.py") else None
        if name is None or name in names:
            continue
        with open(os.path.join(out, entry), encoding="utf-8") as f:
            if "tools/flaggems_tasks.py" in f.read(1000).replace("\n", " "):
                os.remove(os.path.join(out, entry))


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", required=True, help="the folder holding flag_gems/ (FlagGems' src)")
    parser.add_argument("--tests", help="FlagGems' tests/ folder (test_<op>.py, accuracy_utils.py)")
    parser.add_argument("--out", default="jobs/flaggems/tasks")
    parser.add_argument("--manifest", default="jobs/flaggems_library.json")
    args = parser.parse_args(argv)
    tasks, skipped = collect(args.src, args.tests)
    os.makedirs(args.out, exist_ok=True)
    remove_stale(args.out, {t["name"] for t in tasks})
    for task in tasks:
        write(os.path.join(args.out, f"{task['name']}_torch.py"), task_source(task))
        write(os.path.join(args.out, f"{task['name']}_triton_impl.py"), impl_source(task))
    write(os.path.join(args.out, "INDEX.md"), index_text(tasks, skipped, args.src))
    write(args.manifest, compact_json(manifest(tasks, args.out, args.manifest)))
    print(f"flaggems_tasks: {len(tasks)} tasks in {args.out}, {len(skipped)} registrations left out (INDEX.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
