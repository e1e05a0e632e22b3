"""An override library's registration table, (("abs", abs), ("add.Tensor", add), ...) as
FlagGems registers its ATen kernels: the lint of an override follows the rows of the operator
under test only (the others' kernels never run for it, and their torch use is not its). Which
rows really serve the operator is the runtime evidence's to show (provenance)."""
import ast

from .symbols import _const_str


def aten_base(key):
    """The operator of an ATen registration key: "add" of "add.Tensor", "softmax" of "_softmax"."""
    return key.split(".", 1)[0].lstrip("_")


def override_names(overrides):
    """The names an override of `overrides` ("torch.abs", "torch.nn.functional.softmax",
    "torch.Tensor.add") registers under, as `aten_base` gives them."""
    name = (overrides or "").rsplit(".", 1)[-1].lstrip("_")
    return (name,) if name else ()


def own_rows(elts, names):
    """Of a tuple or list literal's elements, the rows of `names` when every element is a row
    keyed by a string (a registration table); all of them otherwise, or without `names`."""
    if not names or len(elts) < 2:
        return elts
    keys = [_const_str(e.elts[0]) if isinstance(e, (ast.Tuple, ast.List)) and e.elts else None for e in elts]
    if any(k is None for k in keys):
        return elts
    return [e for e, k in zip(elts, keys) if aten_base(k) in names]
