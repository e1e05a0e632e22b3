"""Generated edge cases (manifest `edge_cases: true`, `opverify verify
--edge-cases`): the sizes and values a test set should have and an
operator's own cases often lack (the eco standard asks for them).

From the base parameters (the first case's, else get_inputs()'s defaults),
each size parameter (an int, or a list/tuple of ints: a shape) in turn takes
0, 1, 2^k-1, 2^k and 2^k+1 for the largest 2^k not above its value (never
above the value plus one), the other parameters staying at the base; then
one case of the base parameters with the inputs laced with NaN, +Inf and
-Inf. A case the task itself cannot build, or its reference cannot run, is
not applicable: it is reported, not failed.
"""
import inspect

LACE = "nan_inf"


def base_params(task, params):
    if params:
        return dict(params[0])
    get_inputs = getattr(task, "get_inputs", None)
    if get_inputs is None:
        return {}
    return {name: p.default for name, p in inspect.signature(get_inputs).parameters.items()
            if p.default is not inspect.Parameter.empty}


def _is_size(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def sizes_around(value):
    k = value.bit_length() - 1
    near = [(1 << k) - 1, 1 << k, (1 << k) + 1]
    return sorted({v for v in [0, 1] + near if 0 <= v <= value + 1 and v != value})


def generate(task, params):
    """[(label, params, lace)] in a stable order."""
    base = base_params(task, params)
    cases = []
    for name, value in base.items():
        if _is_size(value):
            for size in sizes_around(value):
                cases.append((f"{name}={size}", {**base, name: size}, False))
        elif isinstance(value, (list, tuple)) and value and all(_is_size(v) for v in value):
            for axis, extent in enumerate(value):
                for size in sizes_around(extent):
                    shape = list(value)
                    shape[axis] = size
                    cases.append((f"{name}[{axis}]={size}", {**base, name: type(value)(shape)}, False))
    cases.append((LACE, base, True))
    return cases


def lace(inputs, torch):
    """NaN, +Inf and -Inf at the first, middle and last element of every
    floating tensor input (in place: the inputs are the case's own)."""
    for value in inputs:
        tensors = value if isinstance(value, (list, tuple)) else [value]
        for tensor in tensors:
            if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() and tensor.numel() > 0:
                flat = tensor.view(-1) if tensor.is_contiguous() else None
                if flat is None:
                    continue
                n = flat.numel()
                for position, special in ((0, float("nan")), (n // 2, float("inf")), (n - 1, float("-inf"))):
                    flat[position] = special
    return inputs
