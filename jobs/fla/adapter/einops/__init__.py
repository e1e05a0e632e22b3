"""A stand-in for einops, for flash-linear-attention only (jobs/fla/src/README.md).

fla imports einops when it loads (`from einops import rearrange` in its layers, convolutions and
chunked operators). Where einops is not installed (the H200 image), this module gives the four
functions fla uses over torch tensors: rearrange, repeat, reduce and einsum, with einops' pattern
language (named axes, `(a b)` groups, `1` unit axes, `...`, sizes passed as keywords). Where a
real einops is installed anywhere else on sys.path, that one is loaded instead and this module
steps aside.
"""
import importlib.machinery
import importlib.util
import math
import os
import string
import sys


def _real_einops():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    others = [p for p in sys.path if os.path.abspath(p or ".") != here]
    return importlib.machinery.PathFinder.find_spec("einops", others)


_spec = _real_einops()
if _spec is not None:
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["einops"] = _module
    _spec.loader.exec_module(_module)
else:
    import torch

    class EinopsError(ValueError):
        pass

    def _side(text):
        """[[axis, ...] per dimension]: `(a b)` one group of two, `1` an empty group."""
        groups, current = [], None
        for token in text.replace("(", " ( ").replace(")", " ) ").split():
            if token == "(":
                if current is not None:
                    raise EinopsError(f"nested parentheses in {text!r}")
                current = []
            elif token == ")":
                if current is None:
                    raise EinopsError(f"unbalanced parentheses in {text!r}")
                groups.append(current)
                current = None
            else:
                axes = [] if token == "1" else [token]
                if current is None:
                    groups.append(axes)
                else:
                    current.extend(axes)
        if current is not None:
            raise EinopsError(f"unbalanced parentheses in {text!r}")
        return groups

    def _expand_ellipsis(groups, count):
        out = []
        for group in groups:
            if group == ["..."]:
                out.extend([[f"...{i}"] for i in range(count)])
            elif "..." in group:
                out.append([a for a in group if a != "..."] + [f"...{i}" for i in range(count)])
            else:
                out.append(group)
        return out

    def _sizes(shape, groups, known, pattern):
        sizes = dict(known)
        if len(groups) != len(shape):
            raise EinopsError(f"{pattern!r} names {len(groups)} dimensions, the tensor has {len(shape)}")
        for dim, group in zip(shape, groups):
            unknown = [a for a in group if a not in sizes]
            product = math.prod(sizes[a] for a in group if a in sizes)
            if len(unknown) > 1:
                raise EinopsError(f"cannot infer the sizes of {unknown} in {pattern!r}")
            if unknown:
                if product == 0 or dim % product:
                    raise EinopsError(f"{dim} is not divisible by {product} in {pattern!r}")
                sizes[unknown[0]] = dim // product
            elif product != dim:
                raise EinopsError(f"dimension {dim} is not {product} in {pattern!r}")
        return sizes

    def _parse(tensor, pattern, axes_lengths):
        left, arrow, right = pattern.partition("->")
        if not arrow:
            raise EinopsError(f"no '->' in {pattern!r}")
        lhs, rhs = _side(left), _side(right)
        named = sum(1 for g in lhs if g != ["..."])
        count = tensor.dim() - named if any("..." in g for g in lhs) else 0
        lhs, rhs = _expand_ellipsis(lhs, count), _expand_ellipsis(rhs, count)
        return lhs, rhs, _sizes(tuple(tensor.shape), lhs, axes_lengths, pattern)

    def _apply(tensor, pattern, reduction, axes_lengths):
        lhs, rhs, sizes = _parse(tensor, pattern, axes_lengths)
        source = [a for g in lhs for a in g]
        target = [a for g in rhs for a in g]
        x = tensor.reshape([sizes[a] for a in source])
        gone = [a for a in source if a not in target]
        if gone:
            if reduction is None:
                raise EinopsError(f"{gone} are not on the right of {pattern!r}")
            dims = [source.index(a) for a in gone]
            if reduction == "prod":
                for d in sorted(dims, reverse=True):
                    x = torch.prod(x, dim=d)
            else:
                x = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[reduction](x, dim=dims)
            source = [a for a in source if a not in gone]
        kept = [a for a in target if a in source]
        x = x.permute([source.index(a) for a in kept])
        new = [a for a in target if a not in source]
        if new:
            missing = [a for a in new if a not in sizes]
            if missing:
                raise EinopsError(f"the sizes of {missing} are not given for {pattern!r}")
            for i, a in enumerate(target):
                if a in new:
                    x = x.unsqueeze(i)
            x = x.expand([sizes[a] for a in target])
        return x.reshape([math.prod(sizes[a] for a in g) for g in rhs])

    def rearrange(tensor, pattern, **axes_lengths):
        if isinstance(tensor, (list, tuple)):
            tensor = torch.stack(list(tensor))
        return _apply(tensor, pattern, None, axes_lengths)

    def repeat(tensor, pattern, **axes_lengths):
        return _apply(tensor, pattern, None, axes_lengths)

    def reduce(tensor, pattern, reduction, **axes_lengths):
        if reduction not in ("sum", "mean", "prod", "max", "min"):
            raise EinopsError(f"reduction {reduction!r} is not one this stand-in knows")
        return _apply(tensor, pattern, reduction, axes_lengths)

    def einsum(*tensors_and_pattern):
        *tensors, pattern = tensors_and_pattern
        left, _, right = pattern.partition("->")
        names = {}
        letters = iter(string.ascii_letters)

        def letter(axis):
            if axis not in names:
                names[axis] = next(letters)
            return names[axis]
        inputs = ",".join("".join(letter(a) for a in term.split()) for term in left.split(","))
        return torch.einsum(f"{inputs}->{''.join(letter(a) for a in right.split())}", *tensors)
