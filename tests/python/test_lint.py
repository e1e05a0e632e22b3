"""The static lint (`opverify lint`): small inline implementations, one per trick, through
opverify_runtime.lint; then the real jobs/ fixtures through the real `opverify lint` program."""
import glob
import json
import os
import subprocess
import textwrap

import pytest

from opverify_runtime import lint
from task_file import task_constants

JOBS = os.path.join(os.path.dirname(__file__), "..", "..", "jobs")

HEADER = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def _copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
'''
HEADER_LINES = HEADER.count("\n")

HONEST_MODEL = '''
class ModelNew(torch.nn.Module):
    def forward(self, x, y):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out.view(x.shape)
'''


def run(body, filename="op_triton_impl.py", non_compute=False, header=HEADER):
    source = header + textwrap.dedent(body)
    return lint.lint_source(source, filename, non_compute=non_compute)


def line_of(result_source_body, needle, header=HEADER):
    """1-based line in header+body of the first line containing needle."""
    lines = (header + textwrap.dedent(result_source_body)).splitlines()
    return next(i + 1 for i, text in enumerate(lines) if needle in text)


def violations(result, check):
    return result["checks"][check].get("violations", [])


def calls(result, check):
    return [v["call"] for v in violations(result, check)]


def assert_valid(result):
    failing = {k: v for k, v in result["checks"].items() if not v["passed"]}
    assert result["valid"], json.dumps(failing, indent=1)
    assert result["regression_type"] is None and lint.exit_code(result) == 0


# ---- the JSON shape ---------------------------------------------------------------------------

def test_honest_kernel_is_valid_and_result_has_the_seed_fields():
    r = run(HONEST_MODEL)
    assert_valid(r)
    assert set(r) >= {"valid", "regression_type", "checks", "suggestion", "file"}
    assert r["file"] == "op_triton_impl.py"
    assert list(r["checks"])[:4] == ["triton_kernel_exists", "kernel_called_from_forward",
                                     "no_forbidden_torch_ops", "no_placeholder_kernels"]
    assert set(r["checks"]) == set(lint.CHECK_TYPES)
    assert r["checks"]["triton_kernel_exists"]["kernels"] == ["_add_kernel", "_copy_kernel"]
    assert r["checks"]["kernel_called_from_forward"]["called"] == ["_add_kernel"]
    assert r["checks"]["no_placeholder_kernels"]["placeholders"] == []
    json.dumps(r)  # serialisable as is


def test_json_round_trip_and_text_summary():
    r = run('''
        def _helper(x):
            return torch.matmul(x, x)

        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                h = _helper(x)
                out = torch.empty_like(h)
                _add_kernel[(1,)](h, y, out, h.numel(), BLOCK=1024)
                return out
    ''', filename="f_triton_impl.py")
    text = lint.format_text(r)
    line = HEADER_LINES + 3
    assert f"f_triton_impl.py:{line}: torch.matmul \u2014 " in text
    assert text.startswith("f_triton_impl.py: INVALID: regression type 3")
    assert "suggestion: " in text


# ---- type 1 -----------------------------------------------------------------------------------

def test_type1_no_kernel_at_all():
    r = lint.lint_source(textwrap.dedent('''
        import torch
        class ModelNew(torch.nn.Module):
            def forward(self, x):
                return torch.softmax(x, dim=-1)
    '''), "p_triton_impl.py")
    assert r["regression_type"] == 1 and not r["valid"]
    assert r["checks"]["triton_kernel_exists"] == {
        "passed": False, "kernels": [], "lines": {}, "error": r["checks"]["triton_kernel_exists"]["error"],
        "regression_type": 1}
    assert "@triton.jit" in r["suggestion"]
    assert lint.exit_code(r) == 1


@pytest.mark.parametrize("decoration", [
    "from triton import jit\n\n@jit\ndef _k(x_ptr, o_ptr):",
    "import triton as tr\n\n@tr.jit\ndef _k(x_ptr, o_ptr):",
    "@triton.autotune(configs=[triton.Config({'B': 32})], key=['n'])\n@triton.jit\ndef _k(x_ptr, o_ptr):",
    "@triton.heuristics({'B': lambda a: 32})\n@triton.jit(do_not_specialize=['n'])\ndef _k(x_ptr, o_ptr):",
    "def _k_py(x_ptr, o_ptr):\n    pass\n_k = triton.jit(_k_py)\ndef _unused(x_ptr, o_ptr):",
])
def test_every_form_of_jit_is_a_kernel(decoration):
    source = textwrap.dedent('''
        import torch
        import triton
        import triton.language as tl
    ''') + decoration + textwrap.dedent('''
            tl.store(o_ptr, tl.exp(tl.load(x_ptr)))
        ''').replace("\n", "\n    ", 1) + textwrap.dedent('''

        class ModelNew(torch.nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                _k[(1,)](x, out)
                return out
    ''')
    if "_k_py" in source:  # the call form: the kernel body is _k_py's
        source = source.replace("def _k_py(x_ptr, o_ptr):\n    pass",
                                "def _k_py(x_ptr, o_ptr):\n    tl.store(o_ptr, tl.exp(tl.load(x_ptr)))")
    r = lint.lint_source(source, "k_triton_impl.py")
    assert_valid(r)


# ---- type 2 -----------------------------------------------------------------------------------

def test_type2_kernel_defined_but_never_launched():
    r = run('''
        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                return x + y
    ''')
    assert r["regression_type"] == 2 and r["regression_types"] == [2]
    assert r["checks"]["kernel_called_from_forward"]["called"] == []
    assert "_add_kernel" in r["suggestion"]


def test_type2_launch_only_in_an_unreachable_function():
    r = run('''
        def _never_called(x, y, out):
            _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)

        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                return x
    ''')
    assert r["regression_type"] == 2


def test_type2_warmup_is_not_a_launch():
    r = run('''
        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                out = torch.empty_like(x)
                _add_kernel.warmup(x, y, out, x.numel(), BLOCK=1024, grid=(1,))
                return out
    ''')
    assert r["regression_type"] == 2


def test_type2_no_model_new():
    r = run('''
        class Model(torch.nn.Module):
            pass
    ''')
    assert r["regression_type"] == 2
    assert "ModelNew" in r["checks"]["kernel_called_from_forward"]["error"]


@pytest.mark.parametrize("body", [
    # a module-level wrapper, two deep
    '''
    def _launch(x, y, out):
        _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)

    def _wrapper(x, y):
        out = torch.empty_like(x)
        _launch(x, y, out)
        return out

    class ModelNew(torch.nn.Module):
        def forward(self, x, y):
            return _wrapper(x, y)
    ''',
    # the kernel passed to a generic launcher
    '''
    def _launch(kernel, grid, *args):
        kernel[grid](*args, BLOCK=1024)

    class ModelNew(torch.nn.Module):
        def forward(self, x, y):
            out = torch.empty_like(x)
            _launch(_add_kernel, (1,), x, y, out, x.numel())
            return out
    ''',
    # local and self aliases, a method, kernel.run
    '''
    class ModelNew(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.kernel = _add_kernel

        def _go(self, x, y, out):
            k = self.kernel
            k[(1,)](x, y, out, x.numel(), BLOCK=1024)

        def forward(self, x, y):
            out = torch.empty_like(x)
            self._go(x, y, out)
            return out
    ''',
    '''
    class ModelNew(torch.nn.Module):
        def forward(self, x, y):
            out = torch.empty_like(x)
            _add_kernel.run(x, y, out, x.numel(), BLOCK=1024, grid=(1,), warmup=False)
            return out
    ''',
    # torch.autograd.Function
    '''
    class _AddFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = torch.empty_like(x)
            _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
            return out

    class ModelNew(torch.nn.Module):
        def forward(self, x, y):
            return _AddFn.apply(x, y)
    ''',
    # a module-level alias of the kernel and an autotuned grid lambda
    '''
    add = _add_kernel

    class ModelNew(torch.nn.Module):
        def forward(self, x, y):
            out = torch.empty_like(x)
            grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)
            add[grid](x, y, out, x.numel(), BLOCK=1024)
            return out
    ''',
])
def test_reachability_through_wrappers_and_aliases(body):
    assert_valid(run(body))


# ---- type 3: the seed's rules -----------------------------------------------------------------

def test_seed_typical_cheat_is_type3_and_type4():
    body = '''
        def _run_flash_attention(x, wq):
            query = torch.matmul(x, wq.t())
            weights = query.softmax(dim=-1)
            return weights.contiguous()

        class ModelNew(torch.nn.Module):
            def forward(self, x, wq):
                y = _run_flash_attention(x, wq)
                out = torch.empty_like(y)
                n = y.numel()
                _copy_kernel[(triton.cdiv(n, 1024),)](y, out, n, BLOCK=1024)
                return out
    '''
    r = run(body)
    assert r["regression_type"] == 3 and r["regression_types"] == [3, 4]
    v = violations(r, "no_forbidden_torch_ops")
    assert [(x["line"], x["call"]) for x in v] == [
        (line_of(body, "torch.matmul"), "torch.matmul"), (line_of(body, "query.softmax"), "query.softmax")]
    assert r["checks"]["no_placeholder_kernels"] == {
        "passed": False, "placeholders": ["_copy_kernel"], "regression_type": 4,
        "violations": [{"line": line_of(body, "def _copy_kernel"), "call": "_copy_kernel",
                        "reason": violations(r, "no_placeholder_kernels")[0]["reason"]}]}
    assert "line " + str(line_of(body, "torch.matmul")) in r["suggestion"]


@pytest.mark.parametrize("snippet,expected_call", [
    ("y = torch.nn.functional.relu(x)", "torch.nn.functional.relu"),
    ("y = F.softmax(x, dim=-1)", "F.softmax"),
    ("y = torch.cat([x, x])", "torch.cat"),
    ("y = x.exp()", "x.exp"),
    ("y = x.max(dim=-1).values", "x.max"),
    ("y = x @ x", "@"),
    ("y = torch.Tensor.softmax(x, -1)", "torch.Tensor.softmax"),
    # in place, and the rest of Tensor's math: each once passed as no compute
    ("y = x.cos_()", "x.cos_"),
    ("y = x.addcmul_(x, y)", "x.addcmul_"),
    ("y = x.lerp_(y, 1.0)", "x.lerp_"),
    ("y = x.clamp_min_(0)", "x.clamp_min_"),
    ("y = x.logaddexp(y)", "x.logaddexp"),
    ("y = x.float_power(2)", "x.float_power"),
    ("y = x.diff()", "x.diff"),
    ("y = x.uniform_()", "x.uniform_"),
    # unbound, dunder and re-exported spellings
    ("y = type(x).exp(x)", "type(x).exp"),
    ("y = x.__class__.exp(x)", "x.__class__.exp"),
    ("y = x.__lt__(0)", "x.__lt__"),
    ("y = torch.cuda.torch.exp(x)", "torch.cuda.torch.exp"),
    ("y = F.Tensor.exp(x)", "F.Tensor.exp"),
    ("y = torch.nn.Parameter.softmax(x, -1)", "torch.nn.Parameter.softmax"),
    ("y = torch.nn.modules.activation.F.relu(x)", "torch.nn.modules.activation.F.relu"),
    ("y = torch.cuda.comm.reduce_add([x, x])", "torch.cuda.comm.reduce_add"),
    ("y = [input.exp() for input in (x,)][0]", "input.exp"),  # a variable named like a builtin
])
def test_type3_torch_compute_in_forward(snippet, expected_call):
    body = f'''
        import torch.nn.functional as F

        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                {snippet}
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return out
    '''
    r = run(body)
    assert r["regression_type"] == 3
    v = violations(r, "no_forbidden_torch_ops")
    assert [x["call"] for x in v] == [expected_call]
    assert v[0]["line"] == line_of(body, snippet)


@pytest.mark.parametrize("where, body", [
    ("after", "ModelNew.forward = lambda self, x, y: torch.add(x, y)"),
    ("after", "setattr(ModelNew, 'forward', _torch_add)"),
    ("init", "self.forward = self._fused"),
    ("init", "torch.nn.Module.register_forward_hook(self, _hook)"),
    ("init", "register = self.register_forward_hook"),
    ("init", "self._forward_hooks[0] = _hook"),
    ("class", "def _call_impl(self, *args, **kwargs):\n                return torch.add(*args)"),
    ("class", "def __getattribute__(self, name):\n                return object.__getattribute__(self, name)"),
    ("decorator", "@_patched"),
])
def test_what_would_run_instead_of_the_forward_read_is_type_3(where, body):
    """A forward swapped at run time (assigned, set by name, nn.Module's call machinery
    redefined, a class decorator of the file's own) or a hook the lint cannot follow: the
    forward the lint reads is not what runs (each was valid, the work done by torch)."""
    source = f'''
        def _torch_add(self, x, y):
            return torch.add(x, y)


        def _hook(module, args, out):
            return torch.add(*args)


        def _patched(cls):
            return cls


        {body if where == "decorator" else ""}
        class ModelNew(torch.nn.Module):
            def __init__(self):
                super().__init__()
                {body if where == "init" else "pass"}

            {body if where == "class" else ""}

            def _fused(self, x, y):
                return torch.add(x, y)

            def forward(self, x, y):
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return out


        {body if where == "after" else ""}
    '''
    r = run(source)
    assert r["regression_type"] == 3 and not r["checks"]["no_dynamic_code"]["passed"], r["checks"]


def test_a_str_enums_member_equals_its_value():
    """`class Backend(str, Enum)`: Backend.TORCH == "torch" is True, so the torch branch runs
    (it was pruned as a plain Enum's member, never equal to a string: a missed cheat)."""
    body = '''
        import enum

        class Backend(str, enum.Enum):
            TRITON = "triton"
            TORCH = "torch"

        def _finish(t, backend=Backend.TORCH):
            if backend == "torch":
                return torch.softmax(t, dim=-1)
            return t

        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return _finish(out)
    '''
    r = run(body)
    assert r["regression_type"] == 3 and calls(r, "no_forbidden_torch_ops") == ["torch.softmax"]


@pytest.mark.parametrize("after, call, op", [
    ("out += y", "out += y", "Tensor.add"),
    ("out = out * 2.0", "out * 2.0", "Tensor.mul"),
    ("out = 1 - out", "1 - out", "Tensor.sub"),
    ("out = -out", "-out", "Tensor.neg"),
    ("out = (out > 0).to(x.dtype)", "out > 0", "Tensor.gt"),
    ("out //= 3", "out //= 3", "Tensor.floor_divide"),
    ("out = abs(out)", "abs(...)", "Tensor.abs"),
    ("out = sum([out, y])", "sum(...)", "Tensor.sum"),
    ("out = operator.add(out, y)", "operator.add(...)", "Tensor.add"),
])
def test_arithmetic_on_a_tensor_the_forward_made_is_torch_compute(after, call, op):
    """A decoy kernel, then Python's operators on its output: PyTorch computes (each was valid)."""
    body = f'''
        import operator

        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, x, out, x.numel(), BLOCK=1024)
                {after}
                return out
    '''
    r = run(body)
    assert r["regression_type"] == 3
    found = violations(r, "no_forbidden_torch_ops")
    assert [(v["call"], v["op"]) for v in found] == [(call, op)], found


def test_arithmetic_on_numbers_shapes_and_pointers_is_not_compute():
    body = '''
        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                out = torch.empty_like(x)
                n = x.numel() * 1
                rows = out.shape[0] // 2 + out.stride(0) - 1
                grid = ((n + 1023) // 1024, max(abs(-rows), 1), min(sum([n, rows]), 65535))
                assert out is not None and out.dtype == x.dtype and out.numel() > 0
                _add_kernel[grid](x, y, out, n % (1 << 31), BLOCK=1024)
                return out
    '''
    r = run(body)
    assert r["valid"], violations(r, "no_forbidden_torch_ops")


@pytest.mark.parametrize("snippet", [
    "tracer.trace(fn, x)",  # a tracer's trace, not Tensor.trace()
    "stats.histogram(x, 10, True, None, False)",
    "stats.cov(x, y)",
    "names.diff(old, new, 3, True, 1)",
])
def test_other_objects_methods_named_like_tensor_math_are_not_compute(snippet):
    """A call that passes what the tensor method does not take is another object's method."""
    body = f'''
        class ModelNew(torch.nn.Module):
            def forward(self, x, y, tracer=None, stats=None, names=None, fn=None, old=None, new=None):
                {snippet}
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return out
    '''
    r = run(body)
    assert r["valid"], violations(r, "no_forbidden_torch_ops")


def test_type3_forward_only_rules_loops_append_and_self_layers():
    body = '''
        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                outs = []
                for i in range(2):
                    outs.append(x)
                while False:
                    pass
                z = self.proj(x)
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return out
    '''
    r = run(body)
    got = {(v["line"], v["call"]) for v in violations(r, "no_forbidden_torch_ops")}
    assert got == {(line_of(body, "for i"), "for loop"), (line_of(body, "outs.append"), "outs.append(...)"),
                   (line_of(body, "while False"), "while loop"), (line_of(body, "self.proj"), "self.proj(...)")}
    # The same loops in a helper are not forward's own: not flagged (as upstream).
    r = run('''
        def _prep(xs):
            for t in xs:
                pass
            return xs

        class ModelNew(torch.nn.Module):
            def _shape(self, x):
                return x.shape

            def forward(self, x, y):
                _prep([x])
                self._shape(x)
                self.parameters()
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return out
    ''')
    assert_valid(r)


def test_type3_nn_layers_anywhere_and_sdpa():
    body = '''
        import torch.nn as nn

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x, y):
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return out

        def _unused(q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
    '''
    r = run(body)
    got = [(v["line"], v["call"]) for v in violations(r, "no_forbidden_torch_ops")]
    assert got == [(line_of(body, "nn.Linear(4"), "nn.Linear"),
                   (line_of(body, "scaled_dot"), "torch.nn.functional.scaled_dot_product_attention")]


def test_type3_reachability_into_methods_base_classes_and_local_classes():
    body = '''
        class _Base(torch.nn.Module):
            def forward(self, x, y):
                return torch.relu(x)

        class _Helper:
            def __call__(self, x):
                return x.sigmoid()

        class ModelNew(_Base):
            def _pre(self, x):
                return torch.tanh(x)

            def forward(self, x, y):
                a = self._pre(x)
                b = super().forward(x, y)
                c = _Helper()(x)
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return out
    '''
    r = run(body)
    assert sorted(calls(r, "no_forbidden_torch_ops")) == ["torch.relu", "torch.tanh", "x.sigmoid"]


def test_unreachable_torch_code_and_main_block_are_not_flagged():
    r = run(HONEST_MODEL + '''

def reference(x, y):
    return torch.softmax(x + y, -1)

if __name__ == "__main__":
    import threading
    x = torch.randn(8)
    print(torch.allclose(ModelNew()(x, x), reference(x, x)))
''')
    assert_valid(r)


def test_honest_idioms_are_not_flagged():
    r = run('''
        from typing import Optional

        KERNELS = {"add": _add_kernel}

        class ModelNew(torch.nn.Module):
            def __init__(self, dim: int = 4):
                super().__init__()
                self.register_buffer("scale", torch.ones(dim))

            @torch.no_grad()
            def forward(self, x: torch.Tensor, y: Optional[torch.Tensor] = None) -> torch.Tensor:
                assert x.is_cuda and x.dtype in (torch.float16, torch.float32), "bad input"
                if x.dim() == 1:
                    x = x.unsqueeze(0)
                n = x.numel()
                block = max(16, min(1024, triton.next_power_of_2(n)))
                out = x.new_empty(x.shape)
                with torch.cuda.device(x.device):
                    KERNELS["add"][(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
                torch.cuda.synchronize()
                return out.reshape(x.shape).to(x.dtype)
    ''')
    assert_valid(r)


@pytest.mark.parametrize("body,check", [
    # forward is a torch function
    ('''
    class ModelNew(torch.nn.Module):
        forward = torch.nn.functional.softmax
    ''', "no_hidden_torch_compute"),
    # __call__ overrides forward
    ('''
    class ModelNew(torch.nn.Module):
        def __call__(self, x, y):
            return torch.softmax(x, -1)

        def forward(self, x, y):
            out = torch.empty_like(x)
            _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
            return out
    ''', "no_forbidden_torch_ops"),
    # a forward hook replaces the output
    ('''
    def _fix(module, inputs, output):
        return torch.softmax(inputs[0], -1)

    class ModelNew(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_forward_hook(_fix)

        def forward(self, x, y):
            out = torch.empty_like(x)
            _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
            return out
    ''', "no_forbidden_torch_ops"),
    # a property computes
    ('''
    class ModelNew(torch.nn.Module):
        @property
        def w(self):
            return torch.randn(4).exp()

        def forward(self, x, y):
            out = torch.empty_like(x)
            _add_kernel[(1,)](x, self.w, out, x.numel(), BLOCK=1024)
            return out
    ''', "no_forbidden_torch_ops"),
    # ModelNew rebound to another class after an honest one
    ('''
    class _Honest(torch.nn.Module):
        def forward(self, x, y):
            out = torch.empty_like(x)
            _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
            return out

    class _Cheat(_Honest):
        def forward(self, x, y):
            super().forward(x, y)
            return torch.add(x, y)

    ModelNew = _Honest
    ModelNew = _Cheat
    ''', "no_forbidden_torch_ops"),
    # compute in a nested function of forward
    ('''
    class ModelNew(torch.nn.Module):
        def forward(self, x, y):
            def inner(t):
                return t.mean()
            out = torch.empty_like(x)
            _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
            return out + inner(x)
    ''', "no_forbidden_torch_ops"),
    # an operator table reached through a dict
    ('''
    OPS = {"mm": torch.matmul}

    class ModelNew(torch.nn.Module):
        def forward(self, x, y):
            out = torch.empty_like(x)
            _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
            return OPS["mm"](out, y)
    ''', "no_hidden_torch_compute"),
])
def test_more_evasions(body, check):
    r = run(body)
    assert not r["checks"][check]["passed"], json.dumps(r["checks"], indent=1)
    assert 3 in r["regression_types"]  # (forward = F.softmax also launches nothing: type 2)


# ---- type 3: our stricter checks --------------------------------------------------------------

FORWARD_WITH = '''
class ModelNew(torch.nn.Module):
    def forward(self, x, y):
        {line}
        out = torch.empty_like(x)
        _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
        return out
'''


def forward_with(line, prefix=""):
    return prefix + FORWARD_WITH.format(line=line)


def test_dynamic_lookup_string_built_getattr():
    body = forward_with('z = getattr(torch, "mat" + "mul")(x, x)')
    r = run(body)
    assert r["regression_type"] == 3
    v = violations(r, "no_dynamic_lookup")
    assert v[0]["line"] == line_of(body, "getattr(torch")
    assert v[0]["call"] == "getattr(torch, 'mat' + 'mul') = 'matmul'"


@pytest.mark.parametrize("line", [
    'z = getattr(torch, name)(x)',
    'z = getattr(torch, "matmul")(x, x)',
    'z = getattr(torch.nn.functional, "relu")(x)',
    'z = torch.__dict__["matmul"](x, x)',
    'z = vars(torch)["exp"](x)',
    'z = importlib.import_module("torch.nn.functional").relu(x)',
    'z = getattr(x, "softmax")(-1)',
    'z = getattr(x, op_name)()',
    'z = globals()["torch"].exp(x)',
    'z = operator.methodcaller("exp")(x)',
])
def test_dynamic_lookups(line):
    r = run(forward_with(line, prefix="import importlib\nimport operator\nname = 'exp'\nop_name = 'exp'\n"))
    assert not r["checks"]["no_dynamic_lookup"]["passed"], line
    assert r["regression_type"] == 3


def test_getattr_of_a_dtype_is_fine():
    assert_valid(run(forward_with('dt = getattr(torch, "float16")')))


@pytest.mark.parametrize("line,call", [
    ('exec("z = torch.exp(x)")', "exec"),
    ('z = eval("torch.exp")(x)', "eval"),
    ('code = compile("1", "f", "eval")', "compile"),
    ('t = __import__("torch")', "__import__"),
    ('f = torch.compile(lambda a: a * 2)', "torch.compile"),
])
def test_dynamic_code(line, call):
    body = forward_with(line)
    r = run(body)
    v = violations(r, "no_dynamic_code")
    assert v and v[0]["call"].startswith(call) and v[0]["line"] == line_of(body, line[:12])
    assert r["regression_type"] == 3


@pytest.mark.parametrize("prefix,line", [
    ("from softmax_torch import Model\n", "ref = Model()"),
    ("import softmax_torch as ref\n", "z = ref.Model()(x)"),
    ("from . import softmax_torch\n", "z = x"),
    ("import importlib.util\n",
     'spec = importlib.util.spec_from_file_location("r", "/tmp/softmax_torch.py")'),
    ("import sys\n", 'ref = sys.modules["softmax_torch"]'),
    ("import gc\n", "objs = gc.get_objects()"),
    ("import inspect\n", "frame = inspect.currentframe().f_back"),
    ("", "m = Model()"),
])
def test_reference_use(prefix, line):
    r = run(forward_with(line, prefix=prefix), filename="softmax_triton_impl.py")
    assert not r["checks"]["no_reference_use"]["passed"], (prefix, line)
    assert r["regression_type"] == 3


def test_importing_a_module_named_like_the_task():
    r = run(forward_with("z = x", prefix="import softmax\n"), filename="softmax_triton_impl.py")
    assert calls(r, "no_reference_use") == ["import softmax"]
    assert_valid(run(forward_with("z = x", prefix="import softmax\n"), filename="other_triton_impl.py"))


def test_hidden_compute_module_alias_class_attribute_lambda_partial_default():
    body = '''
        import functools
        from torch import *

        mm = torch.matmul
        act = lambda t: torch.sigmoid(t)
        smax = functools.partial(torch.softmax, dim=-1)

        def _scale(x, op=torch.exp):
            return op(x)

        class ModelNew(torch.nn.Module):
            norm = torch.nn.functional.normalize

            def __init__(self):
                super().__init__()
                self.op = torch.tanh

            def forward(self, x, y):
                a = mm(x, x)
                b = act(x)
                c = smax(x)
                d = _scale(x)
                e = self.norm(x)
                f = self.op(x)
                g = (lambda t: t.cumsum(0))(x)
                out = torch.empty_like(x)
                _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return out
    '''
    r = run(body)
    assert r["regression_type"] == 3
    got = {(v["line"], v["call"].split(" ")[0]) for v in violations(r, "no_hidden_torch_compute")}
    expected = {
        (line_of(body, "from torch import *"), "from"),
        (line_of(body, "a = mm("), "mm"),
        (line_of(body, "act = lambda"), "torch.sigmoid"),
        (line_of(body, "c = smax("), "smax"),
        (line_of(body, "op=torch.exp"), "torch.exp"),
        (line_of(body, "return op(x)"), "op"),
        (line_of(body, "e = self.norm"), "self.norm"),
        (line_of(body, "f = self.op"), "self.op"),
        (line_of(body, "g = (lambda"), "t.cumsum"),
    }
    assert expected <= got, sorted(got)
    reasons = " ".join(v["reason"] for v in violations(r, "no_hidden_torch_compute"))
    assert "module-level alias 'mm'" in reasons and "class attribute 'norm'" in reasons
    assert "attribute self.op" in reasons and "functools.partial" in reasons and "lambda" in reasons


def test_hidden_compute_as_a_value_passed_around():
    body = forward_with("z = list(map(torch.exp, [x]))")
    r = run(body)
    assert calls(r, "no_hidden_torch_compute") == ["torch.exp"]


@pytest.mark.parametrize("prefix,line", [
    ("", "z = torch.ops.aten.mm(x, x)"),
    ("", "z = torch._C._nn.linear(x, x)"),
    ("from torch._ops import ops\n", "z = x"),
    ("", "z = torch._foreach_add([x], [y])"),
    ("", "lib = torch.library.Library('aten', 'IMPL')"),
])
def test_aten_ops(prefix, line):
    r = run(forward_with(line, prefix=prefix))
    assert not r["checks"]["no_aten_ops"]["passed"], line
    assert r["regression_type"] == 3
    assert r["checks"]["no_forbidden_torch_ops"]["passed"]  # reported once, under aten


def test_tensor_subclass_dispatch_is_flagged():
    r = run(forward_with("z = x", prefix='''
class Lazy(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs)
'''))
    assert calls(r, "no_aten_ops") == ["def __torch_function__"]


# ---- type 5 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("prefix,line", [
    ("", "s = torch.cuda.Stream()"),
    ("", "torch.cuda.set_stream(torch.cuda.Stream())"),
    ("", "g = torch.cuda.CUDAGraph()"),
    ("import threading\n", "t = threading.Thread(target=print)"),
    ("from concurrent.futures import ThreadPoolExecutor\n", "z = x"),
    ("import os\n", "pid = os.fork()"),
    ("import multiprocessing\n", "z = x"),
    ("import asyncio\n", "z = x"),
])
def test_side_streams_threads_and_processes(prefix, line):
    r = run(forward_with(line, prefix=prefix))
    assert not r["checks"]["no_side_streams_or_threads"]["passed"], line
    assert r["regression_type"] == 5 and r["regression_types"] == [5]
    assert "stream" in r["suggestion"]


def test_with_a_side_stream_exact_line():
    body = '''
        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                out = torch.empty_like(x)
                s = torch.cuda.Stream()
                with torch.cuda.stream(s):
                    _add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
                return out
    '''
    r = run(body)
    assert [(v["line"], v["call"]) for v in violations(r, "no_side_streams_or_threads")] == [
        (line_of(body, "s = torch.cuda.Stream"), "torch.cuda.Stream"),
        (line_of(body, "with torch.cuda.stream"), "torch.cuda.stream")]


@pytest.mark.parametrize("prefix,line", [
    ("import time\n", "time.perf_counter = lambda: 0.0"),
    ("", "torch.cuda.Event.elapsed_time = lambda self, other: 1e-3"),
    ("", "torch.cuda.synchronize = lambda *a: None"),
    ("import time\n", 'setattr(time, "perf_counter", lambda: 0.0)'),
    ("import triton.testing\n", "triton.testing.do_bench = lambda fn, **kw: 0.001"),
    ("", "torch.softmax = lambda x, dim: x"),
    ("", "torch.backends.cuda.matmul.allow_tf32 = True"),
    ("", 'torch.set_float32_matmul_precision("medium")'),
    ("import time as t\nclock = t\n", "clock.time = lambda: 0.0"),
])
def test_timer_and_torch_tampering(prefix, line):
    r = run(forward_with(line, prefix=prefix))
    assert not r["checks"]["no_timer_tampering"]["passed"], line
    assert r["regression_type"] == 5


def test_tampering_at_module_level_is_caught_too():
    body = HONEST_MODEL + "\nimport time\ntime.perf_counter = time.process_time\n"
    r = run(body)
    assert [(v["line"], v["call"]) for v in violations(r, "no_timer_tampering")] == [
        (line_of(body, "time.perf_counter ="), "time.perf_counter")]


def test_lowest_type_wins_when_several_apply():
    r = run(forward_with("z = torch.exp(x)", prefix="import threading\n"))
    assert r["regression_types"] == [3, 5] and r["regression_type"] == 3


# ---- type 4 and the non-compute switch ----------------------------------------------------------

TRANSPOSE = '''
@triton.jit
def _transpose_kernel(x_ptr, y_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    tile = tl.load(x_ptr + r[:, None] * C + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C))
    tl.store(y_ptr + c[:, None] * R + r[None, :], tl.trans(tile).to(y_ptr.dtype.element_ty),
             mask=(c[:, None] < C) & (r[None, :] < R))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        R, C = x.shape
        y = torch.empty((C, R), dtype=x.dtype, device=x.device)
        _transpose_kernel[(triton.cdiv(R, 32), triton.cdiv(C, 32))](x, y, R, C, BR=32, BC=32)
        return y
'''


def test_non_compute_switch():
    r = run(TRANSPOSE)
    assert r["regression_type"] == 4 and r["checks"]["no_placeholder_kernels"]["placeholders"] == ["_transpose_kernel"]
    assert "--non-compute" in r["suggestion"]
    r = run(TRANSPOSE, non_compute=True)
    assert_valid(r)
    assert r["non_compute"] is True and "skipped" in r["checks"]["no_placeholder_kernels"]


def kernel_model(kernel_body):
    return f'''
@triton.jit
def _k(x_ptr, y_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
{textwrap.indent(textwrap.dedent(kernel_body), "    ")}

class ModelNew(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        _k[(1,)](x, y, out, x.numel(), 2.0, BLOCK=1024)
        return out
'''


@pytest.mark.parametrize("kernel_body", [
    # identity "arithmetic" does not make a copy compute
    """
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n)
    v = v * 1.0 + 0
    tl.store(out_ptr + offs, v.to(tl.float16), mask=offs < n)
    """,
    # masked select driven by indices only, reshapes and casts are data movement
    """
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    v = tl.where(offs < n, v, 0.0)
    tl.store(out_ptr + offs, tl.reshape(v, (BLOCK,)), mask=offs < n)
    """,
    # compute whose result is never stored
    """
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    w = tl.exp(v)
    tl.store(out_ptr + offs, v)
    """,
    # a gather: data-dependent addresses are data movement
    """
    offs = tl.arange(0, BLOCK)
    idx = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.load(x_ptr + idx))
    """,
    # no store at all
    """
    offs = tl.arange(0, BLOCK)
    v = tl.sum(tl.load(x_ptr + offs), axis=0)
    """,
])
def test_placeholder_kernels(kernel_body):
    r = run(kernel_model(kernel_body))
    assert r["regression_type"] == 4, json.dumps(r["checks"], indent=1)


@pytest.mark.parametrize("kernel_body", [
    "tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)) * scale)",
    "tl.store(out_ptr + tl.arange(0, BLOCK), -tl.load(x_ptr + tl.arange(0, BLOCK)))",
    "tl.store(out_ptr + tl.arange(0, BLOCK), tl.abs(tl.load(x_ptr + tl.arange(0, BLOCK))))",
    # compute in the store mask only (a relu into a zeroed output)
    """
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, v, mask=v > 0)
    """,
    # compute inside a jit helper
    """
    offs = tl.arange(0, BLOCK)
    _helper(tl.load(x_ptr + offs), out_ptr + offs)
    """,
    # accumulation in a loop
    """
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n, BLOCK):
        acc += tl.load(x_ptr + i + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)
    """,
    "tl.atomic_add(out_ptr, tl.load(x_ptr))",
])
def test_compute_kernels_are_not_placeholders(kernel_body):
    helper = '''
@triton.jit
def _helper(v, dst):
    tl.store(dst, tl.sqrt(v))
'''
    assert_valid(run(helper + kernel_model(kernel_body)))


def test_one_computing_kernel_among_placeholders_passes():
    r = run('''
        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                tmp = torch.empty_like(x)
                out = torch.empty_like(x)
                _copy_kernel[(1,)](x, tmp, x.numel(), BLOCK=1024)
                _add_kernel[(1,)](tmp, y, out, x.numel(), BLOCK=1024)
                return out
    ''')
    assert_valid(r)
    assert r["checks"]["no_placeholder_kernels"]["placeholders"] == ["_copy_kernel"]


# ---- unreadable input ---------------------------------------------------------------------------

def test_syntax_error_names_file_and_line():
    r = lint.lint_source("import torch\n\ndef f(:\n    pass\n", "bad_triton_impl.py")
    assert r["valid"] is False and r["regression_type"] is None
    assert r["error"].startswith("bad_triton_impl.py:3: SyntaxError")
    assert r["error_line"] == 3 and lint.exit_code(r) == 2
    assert "bad_triton_impl.py:3" in lint.format_text(r)


def test_unreadable_file(tmp_path):
    r = lint.lint_file(tmp_path / "missing_triton_impl.py")
    assert lint.exit_code(r) == 2 and "cannot read" in r["error"]
    p = tmp_path / "latin1_triton_impl.py"
    p.write_bytes(b"x = '\xe9'\n")
    assert lint.exit_code(lint.lint_file(p)) == 2


def test_lint_never_runs_the_file(tmp_path):
    marker = tmp_path / "ran"
    r = run(HONEST_MODEL + f"\nopen({str(marker)!r}, 'w').write('x')\n")
    assert not marker.exists()
    assert_valid(r)


# ---- the real program on the real fixtures --------------------------------------------------------

def lint_cli(opverify_bin, *args):
    proc = subprocess.run([opverify_bin, "lint", *map(str, args)], capture_output=True, text=True, timeout=120)
    return proc


def impls(folder):
    return sorted(glob.glob(os.path.join(JOBS, folder, "*_triton_impl.py")))


@pytest.mark.parametrize("impl", impls("ops"), ids=os.path.basename)
def test_every_honest_operator_passes(opverify_bin, impl):
    consts = task_constants(impl.replace("_triton_impl.py", "_torch.py"))
    flags = ["--json"] + (["--non-compute"] if consts.get("NON_COMPUTE") else [])
    proc = lint_cli(opverify_bin, impl, *flags)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    j = json.loads(proc.stdout)
    assert j["valid"] is True and j["regression_type"] is None and j["file"] == impl
    assert j["checks"]["kernel_called_from_forward"]["called"]


@pytest.mark.parametrize("impl", impls("defects"), ids=os.path.basename)
def test_every_defect(opverify_bin, impl):
    consts = task_constants(impl.replace("_triton_impl.py", "_torch.py"))
    proc = lint_cli(opverify_bin, impl, "--json")
    j = json.loads(proc.stdout)
    if "EXPECTED_LINT_TYPE" not in consts:  # these fail at run time, not statically
        assert proc.returncode == 0 and j["valid"], json.dumps(j["checks"], indent=1)
        return
    assert proc.returncode == 1, proc.stderr
    assert j["valid"] is False and j["regression_type"] == consts["EXPECTED_LINT_TYPE"]
    failing_types = {c["regression_type"] for c in j["checks"].values() if not c["passed"]}
    assert set(consts.get("EXPECTED_LINT_TYPES_ALSO", [])) <= failing_types
    assert set(consts.get("EXPECTED_LINT_TYPES_ALSO", [])) <= set(j["regression_types"])
    assert j["suggestion"]


def test_transpose_needs_the_non_compute_switch(opverify_bin):
    impl = os.path.join(JOBS, "ops", "transpose2d_triton_impl.py")
    proc = lint_cli(opverify_bin, impl, "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["regression_type"] == 4


def test_cli_text_summary(opverify_bin):
    impl = os.path.join(JOBS, "defects", "lint34_seed_cheat_triton_impl.py")
    proc = lint_cli(opverify_bin, impl)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{impl}: INVALID: regression type 3")
    assert f"{impl}:19: torch.matmul \u2014 " in proc.stdout
    assert f"{impl}:20: query.softmax \u2014 " in proc.stdout
    ok = lint_cli(opverify_bin, os.path.join(JOBS, "ops", "softmax_triton_impl.py"))
    assert ok.returncode == 0 and ": valid" in ok.stdout


def test_cli_errors_exit_2(opverify_bin, tmp_path):
    bad = tmp_path / "bad_triton_impl.py"
    bad.write_text("class ModelNew(:\n")
    proc = lint_cli(opverify_bin, bad, "--json")
    assert proc.returncode == 2
    j = json.loads(proc.stdout)
    assert j["valid"] is False and j["error"].startswith(f"{bad}:1: SyntaxError")
    missing = lint_cli(opverify_bin, tmp_path / "missing.py", "--json")
    assert missing.returncode == 2 and "cannot read" in json.loads(missing.stdout)["error"]
    assert lint_cli(opverify_bin).returncode == 2           # no file
    assert lint_cli(opverify_bin, bad, "--bogus").returncode == 2
