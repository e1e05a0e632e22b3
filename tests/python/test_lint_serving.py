"""The static lint on the shapes of LLM-serving libraries (tests/fixtures/lint/lintpkg_serving,
read as source, never imported; docs/LIBRARIES.md, "Two serving libraries"): options given as
enum members or class constants decide branches as literals do, a dtype's questions are not
compute, a tensor the caller allocates is not None, a gather at an index the kernel computed
computes, and a set's, list's or logger's method of a tensor method's name is not torch. Each
case fails on the lint before these rules (a false type 3 or 4), and the torch each branch or
receiver really reaches is still type 3."""
import pytest

from test_lint_resolution import assert_verdict, lint_call


def assert_op(result, torch_op):
    """Valid, launching _double_kernel, where torch_op is None; else type 3 with a violation of torch_op."""
    if torch_op is None:
        assert_verdict(result, None, "_double_kernel")
    else:
        assert 3 in result["regression_types"] and any(v.get("op") == torch_op for check in result["checks"].values()
                                                       for v in check.get("violations", [])), result["checks"]


@pytest.mark.parametrize("call, torch_op", [
    ("lintpkg_serving.by_policy(x)", None),
    ("lintpkg_serving.by_policy(x, lintpkg_serving.QuantPolicy.INT8)", None),
    ("lintpkg_serving.by_policy(x, lintpkg_serving.QuantPolicy.TURBO)", "torch.exp"),
    ("lintpkg_serving.by_policy_value(x)", None),
    ("lintpkg_serving.by_policy_value(x, lintpkg_serving.QuantPolicy.TURBO)", "torch.exp"),
    ("lintpkg_serving.by_policy_value(x, 42)", "torch.exp"),
    ("lintpkg_serving.by_policy(x, c)", "torch.exp"),
    ("lintpkg_serving.by_mode(x)", None),
    ("lintpkg_serving.by_mode(x, lintpkg_serving.Mode.EXACT)", "torch.exp"),
    ("lintpkg_serving.by_config(x)", None),
    ("lintpkg_serving.by_config(x, lintpkg_serving.Config.SLOW)", "torch.exp"),
    ("lintpkg_serving.by_config(x, 2)", "torch.exp"),
])
def test_enum_members_and_class_constants_decide_branches(call, torch_op):
    """lmdeploy's `if quant_policy == QuantPolicy.TURBO_QUANT:` with the default NONE: the
    branch's torch was type 3. A plain Enum's auto() members are distinct; an IntEnum's equal
    their values; an argument the lint cannot know keeps both arms."""
    assert_verdict(lint_call("lintpkg_serving", call, params="x, c"), torch_op, "_double_kernel")


@pytest.mark.parametrize("call, torch_op", [
    ("lintpkg_serving.by_dtype(x)", None),
    ("lintpkg_serving.flatten(x, start_loc=torch.empty_like(x))", None),
    ("lintpkg_serving.flatten(x, torch.zeros(4, dtype=torch.int32))", None),
    ("lintpkg_serving.flatten(x)", "Tensor.cumsum"),
    ("lintpkg_serving.flatten(x, c)", "Tensor.cumsum"),
])
def test_a_dtypes_questions_and_a_new_tensor_are_known(call, torch_op):
    """`quant_dtype.is_floating_point` of torch.int8 is a question (lmdeploy's per-token
    quantisation: type 3 before); a tensor a factory just made is not None, so `if start_loc is
    None:` does not run; a forward's own input may be None, so it still may."""
    assert_op(lint_call("lintpkg_serving", call, params="x, c"), torch_op)


@pytest.mark.parametrize("call, placeholder", [("lintpkg_serving.argmax_gather(x, c)", False),
                                               ("lintpkg_serving.gather(x, c)", True)])
def test_a_gather_at_a_computed_index_computes(call, placeholder):
    """lmdeploy's multinomial sampling stores the id at the position its kernel drew
    (argmax, a random draw): type 4 "only loads and stores" before. A gather at indices it only
    loaded is still data movement."""
    result = lint_call("lintpkg_serving", call, params="x, c")
    assert (4 in result["regression_types"]) == placeholder, result["regression_types"]


@pytest.mark.parametrize("call, torch_op", [
    ("lintpkg_serving.noted(x)", None),
    ("lintpkg_serving.added(x)", "Tensor.add"),
    ("lintpkg_serving.listed(x)", "Tensor.exp"),
    ("lintpkg_serving.dunder(x)", "Tensor.__mul__"),
])
def test_another_objects_method_of_a_tensor_methods_name_is_not_torch(call, torch_op):
    """`seen = set(); seen.add(key)`, a set passed in or kept on the instance, `sizes.sort()`,
    `configs.sort(key=...)` and `logger.log(logging.DEBUG, msg)` were "the tensor method ...
    computes in PyTorch" (lightllm's shapes); a new tensor's `.add` and a list item's `.exp`
    still are."""
    assert_op(lint_call("lintpkg_serving", call), torch_op)


DECORATED = '''\
import functools

import torch
import triton
import triton.language as tl


@triton.jit
def _double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def finished(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return {wrapper_returns}
    return wrapper


class Finished:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return {wrapper_returns_class}


@{decorator}
def launch(x):
    out = torch.empty_like(x)
    _double_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return launch(x)
'''


@pytest.mark.parametrize("decorator, wrapper_returns, torch_op", [
    ("finished", "torch.exp(fn(x))", "torch.exp"),
    ("finished", "fn(x).contiguous()", None),
    ("Finished", "self.fn(x).exp()", "Tensor.exp"),
    ("Finished", "self.fn(x)", None),
    ("functools.lru_cache(maxsize=None)", "fn(x)", None),
])
def test_an_implementations_own_decorator_runs_its_wrapper(decorator, wrapper_returns, torch_op):
    """The implementation file's decorator whose wrapper computes with torch around the kernel's
    launcher was not seen (the launcher alone was scanned). A declared library's decorators stay
    with the runtime evidence (docs/LIBRARIES.md, "Two serving libraries")."""
    from opverify_runtime import lint
    source = DECORATED.format(decorator=decorator, wrapper_returns=wrapper_returns,
                              wrapper_returns_class=wrapper_returns)
    assert_op(lint.lint_source(source, "op_triton_impl.py"), torch_op)


@pytest.mark.parametrize("call, torch_op", [
    ("lintpkg_serving.projected(x)", "torch.nn.Linear.forward"),
    ("lintpkg_serving.plain(x)", "torch.nn.LayerNorm"),
    ("lintpkg_serving.own(x)", None),
])
def test_a_torch_layers_forward_under_a_subclass_is_torch(call, torch_op):
    """`super().forward(x)` in a subclass of torch.nn.Linear, and a subclass of a torch layer
    that keeps its forward, called as an instance, run torch's layer: accepted before (a missed
    cheat). A subclass of nn.Module with a forward of its own launches its kernel."""
    assert_op(lint_call("lintpkg_serving", call), torch_op)
