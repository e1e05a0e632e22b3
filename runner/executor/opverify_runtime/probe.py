"""The hidden-state probe (seed 000 §3), run before the first case's forward.

P0  nothing hidden (no parameters, buffers or random state in Model) -> skip
P1  same-named parameters/buffers must be bitwise equal -> HiddenStateMismatch
P2  every hidden tensor of Model should have a bitwise-equal twin in ModelNew,
    under any name -> warning
P3  (on request) Model run twice on the same inputs gives the same outputs -> warning

A 2-D tensor equal to its twin's transpose counts as equal (a kernel may keep
a weight transposed).
"""
import ast
import inspect

# Calls in Model's class body that create hidden state.
_STATEFUL_CALLS = {
    "Parameter", "register_buffer", "register_parameter", "randn", "rand", "randint", "randperm",
    "normal_", "uniform_", "manual_seed", "empty", "xavier_uniform_", "kaiming_uniform_",
}


def _static_scan(model_class):
    """Names of stateful calls in the Model class body (not the whole file:
    the task's get_inputs draws random inputs legitimately)."""
    try:
        source = inspect.getsource(model_class)
    except (OSError, TypeError):
        return ["<source unavailable>"]
    found = []
    for node in ast.walk(ast.parse(source.lstrip() if source.startswith(" ") else source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _STATEFUL_CALLS or (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                                           and func.value.id == "nn" and name[:1].isupper()):
                found.append(name)
    return found


def _hidden_tensors(module):
    tensors = {}
    for name, value in list(module.named_parameters()) + list(module.named_buffers()):
        tensors[name] = value.detach().cpu()
    return tensors


def _bitwise_equal(a, b, torch):
    if a.dtype != b.dtype:
        return False
    if a.shape == b.shape and _same_bits(a, b, torch):
        return True
    return a.dim() == 2 and b.dim() == 2 and a.shape == b.shape[::-1] and _same_bits(a, b.t(), torch)


def _same_bits(a, b, torch):
    a = a.contiguous()
    b = b.contiguous()
    if a.is_floating_point() or a.is_complex():
        width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64, 16: torch.int64}[a.element_size()]
        a = a.view(torch.uint8) if a.element_size() == 16 else a.view(width)
        b = b.view(torch.uint8) if b.element_size() == 16 else b.view(width)
    return bool(torch.equal(a, b))


def run(torch, model_class, model, model_new, inputs_fn=None, check_determinism=False):
    """Returns {"level": "P0"|"P1"|..., "passed": bool, "mismatches": [...], "warnings": [...]}."""
    static = _static_scan(model_class)
    fw = _hidden_tensors(model)
    if not static and not fw:
        return {"level": "P0", "skipped": True, "passed": True, "mismatches": [], "warnings": []}
    im = _hidden_tensors(model_new)
    result = {"level": "P1", "skipped": False, "passed": True, "mismatches": [], "warnings": [],
              "static_findings": static}
    for name, tensor in fw.items():
        if name in im and not _bitwise_equal(tensor, im[name], torch):
            result["passed"] = False
            result["mismatches"].append(
                f"{name}: Model has {tuple(tensor.shape)} {tensor.dtype}, ModelNew's differs "
                f"({tuple(im[name].shape)} {im[name].dtype}, not bitwise equal)")
    for name, tensor in fw.items():
        if not any(_bitwise_equal(tensor, other, torch) for other in im.values()):
            result["warnings"].append(f"P2: Model's {name} {tuple(tensor.shape)} has no bitwise-equal tensor in ModelNew")
    if check_determinism and inputs_fn is not None:
        with torch.no_grad():
            first = model(*inputs_fn())
            second = model(*inputs_fn())
        firsts = first if isinstance(first, (tuple, list)) else [first]
        seconds = second if isinstance(second, (tuple, list)) else [second]
        for i, (x, y) in enumerate(zip(firsts, seconds)):
            if isinstance(x, torch.Tensor) and not _same_bits(x.detach().cpu(), y.detach().cpu(), torch):
                result["warnings"].append(f"P3: Model's output {i} differs between two runs on the same inputs")
    return result
