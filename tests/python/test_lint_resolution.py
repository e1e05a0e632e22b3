"""The static lint resolves names as Python does, on small packages of our own
(tests/fixtures/lint/lintpkg_*, read as source, never imported): package attributes before
submodules, star imports by binding order and `__all__`, kernels launched through a library's
own decorators and generated modules (followed or left to the runtime evidence, never a false
type 1/2), views and metadata in function form, branches the arguments rule out, and ATen
operators called directly inside a declared library (type 3, however they are named)."""
import os
import textwrap

import pytest

from opverify_runtime import lint

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "lint")


def lint_call(package, call, params="x", imports=None, filename="op_triton_impl.py"):
    """The lint of an implementation whose forward returns `call`, with `package` declared."""
    source = textwrap.dedent(f'''\
        import torch
        {imports or "import " + package}


        class ModelNew(torch.nn.Module):
            def forward(self, {params}):
                return {call}
    ''')
    return lint.lint_source(source, filename, library=[package], python_path=[FIXTURES])


def failing(result):
    return {name: check for name, check in result["checks"].items() if not check["passed"]}


def assert_valid(result):
    assert result["valid"] and result["regression_type"] is None, failing(result)


def violation_calls(result):
    return [v["call"] for check in result["checks"].values() for v in check.get("violations", [])]


def assert_verdict(result, torch_op, kernel=None):
    """Valid (launching only `kernel`, when given) where torch_op is None; else type 3 naming it."""
    if torch_op is None:
        assert_valid(result)
        if kernel is not None:
            assert result["checks"]["kernel_called_from_forward"]["called"] == [kernel]
    else:
        assert 3 in result["regression_types"] and torch_op in violation_calls(result)


# ---- package attributes before submodules ------------------------------------------------------

@pytest.mark.parametrize("imports, call", [
    ("import lintpkg_shadow", "lintpkg_shadow.ops.neg(x)"),
    ("import lintpkg_shadow.ops", "lintpkg_shadow.ops.neg(x)"),
    ("from lintpkg_shadow import ops", "ops.neg(x)"),
    ("from lintpkg_shadow.ops import neg", "neg(x)"),
    ("from lintpkg_shadow.ops import *", "neg(x)"),
])
def test_a_package_attribute_rebinding_a_submodules_name_is_the_function(imports, call):
    """ops/__init__.py binds `neg` to the function after importing ops/neg.py: Python's
    lintpkg_shadow.ops.neg is the function, whose kernel launch the lint must find."""
    result = lint_call("lintpkg_shadow", call, imports=imports)
    assert_valid(result)
    assert result["checks"]["kernel_called_from_forward"]["called"] == ["_neg_kernel"]


def test_the_submodule_is_meant_only_where_nothing_rebinds_its_name():
    """`from lintpkg_shadow.ops.scale import scale` names the module's own torch helper (the
    import system finds the module); `lintpkg_shadow.ops.scale` is the kernel launcher the
    package bound to that name."""
    package = lint_call("lintpkg_shadow", "lintpkg_shadow.ops.scale(x)")
    assert_valid(package)
    assert package["checks"]["kernel_called_from_forward"]["called"] == ["_scale_kernel"]
    module = lint_call("lintpkg_shadow", "scale(x)", imports="from lintpkg_shadow.ops.scale import scale")
    assert 3 in module["regression_types"] and "torch.mul" in violation_calls(module)
    submodule = lint_call("lintpkg_shadow", "scale.scale_rows(x)", imports="from lintpkg_shadow.ops import neg, scale")
    assert submodule["regression_type"] is not None  # the function scale_rows has no attribute scale_rows


# ---- star imports -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, kernel", [("relu", "_relu_kernel"), ("gelu", "_act_kernel"), ("silu", "_act_kernel")])
def test_star_imports_the_last_binding_wins_and_all_limits_the_export(name, kernel):
    """lintpkg_star/__init__.py star-imports torchy (torch), then listed (`__all__ = ["relu"]`),
    then kernels: relu is listed's, gelu kernels' (listed does not export its own), silu the
    explicit binding after the stars. The first star import is torch's and must not be taken."""
    result = lint_call("lintpkg_star", f"lintpkg_star.{name}(x)")
    assert_valid(result)
    assert result["checks"]["kernel_called_from_forward"]["called"] == [kernel]


def test_star_imports_in_the_other_order_find_the_torch_function_bound_last():
    result = lint_call("lintpkg_star", "reversed_order.gelu(x)", imports="from lintpkg_star import reversed_order")
    assert 3 in result["regression_types"]
    assert any("torch.nn.functional.gelu" in call for call in violation_calls(result))


def test_a_star_import_without_all_does_not_export_underscore_names():
    """reversed_order star-imports kernels, then torchy: torchy's `_silu` (torch) is not
    exported, so the kernels' `_silu` bound... nowhere: the package binds no `_silu` at all."""
    result = lint_call("lintpkg_star", "reversed_order._silu(x)", imports="from lintpkg_star import reversed_order")
    assert "torch.nn.functional.silu" not in str(violation_calls(result))


def test_the_implementation_files_own_star_import_of_the_library():
    result = lint_call("lintpkg_star", "gelu(x)", imports="from lintpkg_star import *")
    assert_valid(result)
    assert result["checks"]["kernel_called_from_forward"]["called"] == ["_act_kernel"]


# ---- launches through the library's own machinery ---------------------------------------------

@pytest.mark.parametrize("call", ["lintpkg_gen.add_one(x)", "lintpkg_gen.add_one_2d(x)"])
def test_a_kernel_under_the_librarys_decorator_is_launched_unproven_not_type_2(call):
    """@elementwise makes an object that generates a wrapper and launches add_one_func at run
    time (called directly, or through .instantiate(ndim)(...)): not a type 2, and the launch is
    listed for the runtime evidence to show."""
    result = lint_call("lintpkg_gen", call)
    assert_valid(result)
    unproven = result["unproven"]
    assert unproven["types"] == [2]
    assert {u["kernel"] for u in unproven["launches"]} == {"add_one_func"}
    assert unproven["launches"][0]["how"].startswith("@elementwise launches add_one_func")
    assert unproven["launches"][0]["file"].endswith(os.path.join("lintpkg_gen", "ops.py"))


def test_a_decorated_element_function_that_only_copies_is_a_placeholder():
    result = lint_call("lintpkg_gen", "lintpkg_gen.copy_any(x)")
    assert result["regression_type"] == 4
    assert result["checks"]["no_placeholder_kernels"]["placeholders"] == ["copy_func"]
    assert_valid(lint.lint_source(textwrap.dedent('''\
        import torch
        import lintpkg_gen


        class ModelNew(torch.nn.Module):
            def forward(self, x):
                return lintpkg_gen.copy_any(x)
    '''), "copy_triton_impl.py", non_compute=True, library=["lintpkg_gen"], python_path=[FIXTURES]))


def test_a_module_the_library_generates_and_imports_leaves_types_1_and_2_to_the_runtime():
    """gathered() launches a kernel of a module it writes into a cache folder and imports
    (getattr of a computed name on it): no kernel in the source, no type 1."""
    result = lint_call("lintpkg_gen", "lintpkg_gen.gathered(x, i)", params="x, i")
    assert_valid(result)
    assert result["unproven"]["types"] == [1]
    assert any("generates and imports" in u["how"] for u in result["unproven"]["launches"])
    alone = lint.lint_source(textwrap.dedent('''\
        import torch
        from lintpkg_gen.gather import GatherFunction

        _gather = GatherFunction()


        class ModelNew(torch.nn.Module):
            def forward(self, x, i):
                return _gather(x, i)
    '''), "gather_triton_impl.py", library=["lintpkg_gen"], python_path=[FIXTURES])
    assert alone["valid"] and alone["unproven"]["types"] == [1]


def test_generated_code_in_the_implementation_file_itself_stays_type_3():
    source = textwrap.dedent('''\
        import importlib.util
        import torch


        class ModelNew(torch.nn.Module):
            def forward(self, x):
                spec = importlib.util.spec_from_file_location("k", "/tmp/k.py")
                m = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(m)
                return getattr(m, "run" + str(x.ndim))(x)
    ''')
    result = lint.lint_source(source, "gen_triton_impl.py", library=["lintpkg_gen"], python_path=[FIXTURES])
    assert result["regression_type"] == 1 and 3 in result["regression_types"]
    assert "unproven" not in result


# ---- torch in the library: views, metadata, ATen operators ------------------------------------

@pytest.mark.parametrize("call", ["lintpkg_aten.views(x)", "lintpkg_aten.clamp_max_finite(x)",
                                  "lintpkg_aten.is_dense(x)"])
def test_views_in_function_form_dtype_limits_and_metadata_are_not_compute(call):
    assert_valid(lint_call("lintpkg_aten", call))


@pytest.mark.parametrize("function, shown", [
    ("aten_ops_mul", "torch.ops.aten.mul.Tensor"),
    ("aten_mul", "aten.mul"),
    ("aten_alias_mul", "mul (torch.ops.aten.mul.default)"),
    ("aten_getattr_mul", "getattr(torch.ops.aten, 'mul') (torch.ops.aten.mul)"),
    ("aten_prims_mul", "torch._ops.ops.prims.mul"),
    ("aten_nn_gelu", "torch._C._nn.gelu"),
])
def test_aten_operators_called_directly_inside_the_library_are_type_3(function, shown):
    """The hole: torch.mul in a library function was type 3, torch.ops.aten.mul.Tensor passed."""
    result = lint_call("lintpkg_aten", f"lintpkg_aten.{function}(x, y)", params="x, y")
    assert result["regression_type"] == 3, failing(result)
    found = [v for check in result["checks"].values() for v in check.get("violations", [])]
    assert any(v["call"] == shown and "ATen operator" in v["reason"] for v in found), found
    assert all(v["file"].endswith(os.path.join("lintpkg_aten", "ops.py")) for v in found)


@pytest.mark.parametrize("line", ["torch.ops.aten.mul.Tensor(x, y)", "getattr(torch.ops.aten, 'mul')(x, y)",
                                  "torch._C._nn.gelu(x)", "torch._ops.ops.aten.add(x, y)"])
def test_aten_operators_in_the_implementation_file_are_type_3(line):
    result = lint.lint_source(textwrap.dedent(f'''\
        import torch
        import lintpkg_aten


        class ModelNew(torch.nn.Module):
            def forward(self, x, y):
                return lintpkg_aten.views({line})
    '''), "mul_triton_impl.py", library=["lintpkg_aten"], python_path=[FIXTURES])
    assert result["regression_type"] == 3


@pytest.mark.parametrize("arguments, pruned", [
    ("x, -1", True), ("x, dim=-1, keepdim=False", True), ("x, -1, False, None", True),
    ("x", False), ("x, -1, True", False), ("x, -1, keepdim=k", False), ("x, d", False),
])
def test_branches_the_arguments_known_values_rule_out_are_not_reached(arguments, pruned):
    result = lint_call("lintpkg_aten", f"lintpkg_aten.reduce_rows({arguments})", params="x, k=False, d=None")
    if pruned:
        assert_valid(result)
    else:
        assert 3 in result["regression_types"] and "torch.sum" in violation_calls(result)


@pytest.mark.parametrize("call, pruned", [
    ("lintpkg_aten.rows(x, -1)", True), ("lintpkg_aten.rows(x)", False),
    ("lintpkg_aten.rows_through_a_local_alias(x)", True), ("lintpkg_aten.rows_through_a_local_alias(x, None)", False),
    ("lintpkg_aten.rows_through_a_default(x)", True),
    ("lintpkg_aten.rows_kept(x, -1)", False),
])
def test_a_call_through_an_alias_decides_branches_as_a_call_of_the_function(call, pruned):
    """`rows = reduce_rows` (module level, local, a parameter's default) renames the function:
    its call binds the arguments as reduce_rows' own, so the same branches are ruled out as
    when it is called by its name (fla's `chunk_gdn = chunk_gated_delta_rule` was type 3 for
    branches the arguments do not take). A partial binds some itself: nothing is pruned."""
    result = lint_call("lintpkg_aten", call)
    if pruned:
        assert_valid(result)
    else:
        assert 3 in result["regression_types"] and "torch.sum" in violation_calls(result)


@pytest.mark.parametrize("arguments, pruned", [("x", True), ("x, None", True), ("x, sorter=None, vendor='other'", True),
                                               ("x, s", False), ("x, s, 'other'", False)])
def test_statements_after_a_branch_that_returns_and_decided_conditional_expressions(arguments, pruned):
    """`if sorter is None: return` ends _check_sorter for sorter=None: torch.any after it never
    runs; `sorter.contiguous() if sorter is not None else None` is None then, so is the gather's
    test."""
    result = lint_call("lintpkg_aten", f"lintpkg_aten.search({arguments})", params="x, s=None")
    if pruned:
        assert_valid(result)
    else:
        assert result["regression_type"] == 3 and "torch.any" in violation_calls(result)


def test_a_kernel_a_helper_returns_in_a_tuple_is_launched():
    result = lint_call("lintpkg_aten", "lintpkg_aten.unpacked(x)")
    assert_valid(result)
    assert result["checks"]["kernel_called_from_forward"]["called"] == ["_scale_kernel"]


# ---- the rules themselves, on source text ------------------------------------------------------

def test_all_is_read_where_the_module_builds_it_and_unknown_where_it_cannot_be_read():
    from opverify_runtime.lint.exports import UNKNOWN_ALL, dunder_all
    import ast
    built = ast.parse(textwrap.dedent('''\
        try:
            __all__ = ["a"]
        except ImportError:
            __all__ = []
        __all__ += ["b"]
        __all__.extend(["c"])
        __all__.append("d")


        def f():
            __all__ = [1]  # a local, not the module's
    '''))
    assert dunder_all(built) == {"a", "b", "c", "d"}
    assert dunder_all(ast.parse("x = 1")) is None
    assert dunder_all(ast.parse("__all__ = [n for n in dir() if n[0] != '_']")) == UNKNOWN_ALL


def test_the_last_binding_wins_unless_it_may_not_happen():
    from opverify_runtime.lint.exports import conditional_spans, last_binders
    import ast
    tree = ast.parse(textwrap.dedent('''\
        from a import *
        from b import f
        if FAST:
            from c import f
    '''))
    spans = conditional_spans(tree)
    assert last_binders([(1, "a"), (2, "b")], spans) == ["b"]
    assert last_binders([(1, "a"), (2, "b"), (4, "c")], spans) == ["b", "c"]  # c only if FAST
    assert last_binders([(4, "c")], spans) == ["c"]


@pytest.mark.parametrize("arguments, pruned", [("x, 10, -1.0, 1.0", True), ("x, 10, 0, 1", True),
                                               ("x", False), ("x, 10, 0, 0", False), ("x, 10, lo, 1.0", False)])
def test_a_known_constant_converted_by_float_or_int_still_decides_branches(arguments, pruned):
    result = lint_call("lintpkg_aten", f"lintpkg_aten.histogram({arguments})", params="x, lo=0.0")
    if pruned:
        assert_valid(result)
    else:
        assert result["regression_type"] == 3 and "x.min" in violation_calls(result)


def lint_override(op, entry="lintpkg_registry:use_registry"):
    return lint.lint_entries([entry], library=["lintpkg_registry"], python_path=[FIXTURES], overrides=op)


@pytest.mark.parametrize("op", ["torch.abs", "torch.neg"])
def test_an_override_follows_only_its_own_rows_of_the_registration_table(op):
    """torch.abs and torch.neg reach abs and neg only: sort's torch compute is not theirs
    (without the operator, every row is followed and sort's torch.cumsum fails them)."""
    assert_valid(lint_override(op))
    assert lint_override(None)["regression_types"] == [3]


def test_an_overrides_own_row_computing_with_torch_is_type_3_at_the_librarys_line():
    result = lint_override("torch.sort")
    assert result["regression_types"] == [3]
    violations = result["checks"]["no_forbidden_torch_ops"]["violations"]
    assert [(v["call"], os.path.basename(v["file"])) for v in violations] == [("torch.cumsum", "__init__.py")]
    assert result["override"]["overrides"] == "torch.sort"



# ---- a library shaped like flash-linear-attention's --------------------------------------------

def lint_layer(construct, call):
    """The lint of an implementation that builds `construct` in __init__ and returns `call`."""
    source = textwrap.dedent(f'''\
        import torch
        import lintpkg_layers


        class ModelNew(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = {construct}

            def forward(self, x, c):
                return {call}
    ''')
    return lint.lint_source(source, "op_triton_impl.py", library=["lintpkg_layers"], python_path=[FIXTURES])


@pytest.mark.parametrize("construct, call, torch_op", [
    ("lintpkg_layers.Double()", "self.layer(x)", None),
    ("lintpkg_layers.Double()", "self.layer(x, c)", "torch.repeat_interleave"),
    ("lintpkg_layers.Double()", "self.layer(x, check=True)", "torch.isfinite"),
    ("lintpkg_layers.OwnCall()", "self.layer(x)", None),
    ("lintpkg_layers.OwnCall()", "self.layer(x, cu_seqlens=c)", "torch.repeat_interleave"),
    ("lintpkg_layers.Aliased()", "self.layer(x)", "torch.repeat_interleave"),
])
def test_a_layer_called_as_an_instance_decides_branches_with_the_calls_arguments(construct, call, torch_op):
    """`self.layer(x)` runs the layer's forward (torch's nn.Module.__call__), or the class's own
    __call__, with x and the defaults: the branches they rule out are not reached (fla's
    ShortConvolution was type 3 for its variable-length path, taken only with cu_seqlens)."""
    result = lint_layer(construct, call)
    assert_verdict(result, torch_op)


@pytest.mark.parametrize("construct, torch_op", [
    ("lintpkg_layers.Double().eval()", None),
    ("lintpkg_layers.Double().to(torch.float16).cuda().requires_grad_(False)", None),
    ("lintpkg_layers.make_double()", None),
    ("torch.nn.Sequential(lintpkg_layers.Double(), lintpkg_layers.make_double().half())", None),
    ("lintpkg_layers.TorchDouble().eval()", "torch.mul"),
    ("lintpkg_layers.make_torch_double()", "torch.mul"),
    ("torch.nn.Sequential(lintpkg_layers.Double(), lintpkg_layers.TorchDouble())", "torch.mul"),
])
def test_a_layer_handed_over_by_a_chained_call_a_factory_or_a_sequential_is_that_layer(construct, torch_op):
    """nn.Module's .eval()/.to()/.cuda()/.half() return the module; a factory returns what it
    builds; a torch.nn.Sequential's call runs its modules. The lint follows each to the layer's
    forward (each was type 2+3, "self.layer() is not a method of the class", on attorch's
    layers), and a layer computing in torch is still type 3 however it is handed over."""
    assert_verdict(lint_layer(construct, "self.layer(x)"), torch_op)


@pytest.mark.parametrize("construct, call, torch_op", [
    ("torch.nn.ModuleList([lintpkg_layers.Double()])", "self.layer[0](x)", None),
    ("torch.nn.ModuleList([lintpkg_layers.Double(), lintpkg_layers.TorchDouble()])", "self.layer[1](x)", "torch.mul"),
    ("torch.nn.ModuleDict({'a': lintpkg_layers.Double()})", "self.layer['a'](x)", None),
    ("torch.nn.ModuleDict({'a': lintpkg_layers.TorchDouble()})", "self.layer['a'].forward(x)", "torch.mul"),
    ("torch.nn.Sequential(lintpkg_layers.TorchDouble())", "self.layer[0](x)", "torch.mul"),
    ("lintpkg_layers.ClasscellTorch()", "type(self.layer)._ref(x)", "torch.mul"),
    ("lintpkg_layers.ClasscellTorch()", "self.layer.__class__._ref(x)", "torch.mul"),
])
def test_a_module_held_in_a_container_or_reached_through_its_type_is_that_module(construct, call, torch_op):
    """A ModuleList's, ModuleDict's or Sequential's member taken by index is the layer it holds
    (an honest ModuleList was type 2+3, a torch one's forward was never read); type(obj) and
    obj.__class__ are its class."""
    assert_verdict(lint_layer(construct, call), torch_op)


def test_a_sequential_of_named_modules_runs_them():
    source = textwrap.dedent('''\
        import collections
        import torch
        import lintpkg_layers


        class ModelNew(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = torch.nn.Sequential(collections.OrderedDict([("a", lintpkg_layers.Double()),
                                                                        ("b", lintpkg_layers.TorchDouble())]))

            def forward(self, x):
                return self.body(x)
    ''')
    result = lint.lint_source(source, "op_triton_impl.py", library=["lintpkg_layers"], python_path=[FIXTURES])
    assert_verdict(result, "torch.mul")
    assert result["checks"]["kernel_called_from_forward"]["called"] == ["_double_kernel"]


@pytest.mark.parametrize("construct, torch_op", [
    ("lintpkg_layers.Reduced(reduction='none')", None),
    ("lintpkg_layers.Reduced('none')", None),
    ("lintpkg_layers.Reduced()", "out.sum"),
    ("lintpkg_layers.Reduced(reduction='sum')", "out.sum"),
    ("lintpkg_layers.ReducedLoss(reduction='none')", None),
    ("lintpkg_layers.ReducedLoss()", "out.sum"),
    ("lintpkg_layers.ReducedLoss(size_average=False, reduction='none')", "out.sum"),
    ("lintpkg_layers.Biased(4, bias=False)", None),
    ("lintpkg_layers.Biased(4, False)", None),
    ("lintpkg_layers.Biased(4)", "out.add"),
    ("lintpkg_layers.BiasedConv(3, 8, 3, bias=False)", None),
    ("lintpkg_layers.BiasedConv(3, 8, 3, 1, 0, 1, 1, False)", None),
    ("lintpkg_layers.BiasedConv(3, 8, 3)", "out.add_"),
    ("lintpkg_layers.Dropped()", None),
    ("lintpkg_layers.Dropped(0.0)", None),
    ("lintpkg_layers.Dropped(0.1)", "torch.randint"),
])
def test_a_layers_constructor_options_decide_its_forwards_branches(construct, torch_op):
    """An option the constructor stores on the instance (the class's own __init__, or a torch
    base: a loss keeping `reduction`, a Linear or convolution keeping `bias=False` as None) is
    known in the forward: attorch's MSELoss(reduction='none') was type 3 for the sum it does
    only when reducing. Legacy size_average/reduce leave it unknown."""
    assert_verdict(lint_layer(construct, "self.layer(x)"), torch_op)


@pytest.mark.parametrize("construct, torch_op", [("lintpkg_layers.Classcell()", None),
                                                ("lintpkg_layers.ClasscellTorch()", "torch.mul")])
def test_a_methods_implicit_class_cell_is_its_class(construct, torch_op):
    """`__class__._kernel[grid](...)` in a method (DeepSpeed's matmul_ext) is the class's kernel
    (it was type 2), and `__class__._ref(x)` its torch helper (it was valid)."""
    result = lint_layer(construct, "self.layer(x)")
    assert_verdict(result, torch_op)
    assert result["checks"]["kernel_called_from_forward"]["called"] == ["_double_kernel"]


@pytest.mark.parametrize("call, torch_op", [("lintpkg_layers.double_unless(x)", None),
                                            ("lintpkg_layers.double_unless(x, skip_zeros=True)", "torch.any"),
                                            ("lintpkg_layers.double_unless(x, skip_zeros=c)", "torch.any")])
def test_an_operand_and_or_never_evaluate_is_not_reached(call, torch_op):
    """`skip_zeros and not torch.any(x)` with skip_zeros False never calls torch.any
    (bitsandbytes' kernels_optim.py:757 was type 3 for it)."""
    assert_verdict(lint_call("lintpkg_layers", call, params="x, c"), torch_op)


@pytest.mark.parametrize("write", ["self.layer.reduction = 'mean'", "setattr(self.layer, 'reduction', 'mean')"])
def test_an_option_the_implementation_rewrites_is_not_known(write):
    """Whoever writes the attribute after construction may choose the torch branch: unknown."""
    source = textwrap.dedent(f'''\
        import torch
        import lintpkg_layers


        class ModelNew(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = lintpkg_layers.Reduced(reduction="none")

            def forward(self, x):
                {write}
                return self.layer(x)
    ''')
    result = lint.lint_source(source, "op_triton_impl.py", library=["lintpkg_layers"], python_path=[FIXTURES])
    assert 3 in result["regression_types"] and "out.sum" in violation_calls(result)


@pytest.mark.parametrize("call, torch_op", [
    ("lintpkg_layers.double_forwarding(x)", None),
    ("lintpkg_layers.double(x, check=False)", None),
    ("lintpkg_layers.double_forwarding(x, c)", "torch.repeat_interleave"),
    ("lintpkg_layers.double_forwarding(x, check=True)", "torch.isfinite"),
    ("lintpkg_layers.double_forwarding(x, **c)", "torch.isfinite"),
    ("lintpkg_layers.double_mutating(x)", "torch.isfinite"),
    ("lintpkg_layers.DoubleFunction.apply(x)", None),
    ("lintpkg_layers.DoubleFunction.apply(x, c)", "torch.repeat_interleave"),
    ("lintpkg_layers.double_fn(x, c)", "torch.repeat_interleave"),
])
def test_args_and_kwargs_forwarded_empty_and_read_with_get_decide_branches(call, torch_op):
    """A launcher's `*args, **kwargs` that the call left empty stay empty where they are only
    forwarded (`f(*args, **kwargs)`) and read (`kwargs.get("check", False)` is False); one the
    function writes into (`kwargs.setdefault`) or a call's own `**c` is not known."""
    result = lint_call("lintpkg_layers", call, params="x, c")
    assert_verdict(result, torch_op)


def test_questions_about_torchs_state_are_not_compute():
    """torch.compiler.is_compiling(), torch.jit.is_scripting(), torch._dynamo.is_compiling():
    a bool that chooses a path (fla's activations), not PyTorch compute nor compiled code."""
    assert_valid(lint_call("lintpkg_layers", "lintpkg_layers.double_by_state(x)"))


def test_a_module_named_like_the_operator_is_the_librarys_not_the_reference():
    """`from lintpkg_shadow.ops.neg import neg` in neg_triton_impl.py names the library's module
    neg.py, found by the import system (the package binds `neg` to the function, so an
    attribute walk finds no module): not the reference task module neg_torch.py."""
    result = lint_call("lintpkg_shadow", "neg(x)", imports="from lintpkg_shadow.ops.neg import neg",
                       filename="neg_triton_impl.py")
    assert_valid(result)
    refused = lint_call("lintpkg_shadow", "neg(x)", imports="from neg_torch import Model as neg",
                        filename="neg_triton_impl.py")
    assert refused["checks"]["no_reference_use"]["passed"] is False


@pytest.mark.parametrize("construct, call", [("None", "lintpkg_layers.ScaledFunction.apply(x, 0.1, True)"),
                                             ("lintpkg_layers.Normed(4)", "self.layer(x)")])
def test_values_stored_on_ctx_autocasts_dtype_and_a_torch_bases_input_check_are_not_compute(construct, call):
    """`ctx.dropout = ...` read back as `ctx.dropout` is the value stored, not the tensor method
    .dropout; torch.get_autocast_dtype() is a question; a BatchNorm subclass's
    self._check_input_dim(x) is torch's check of the input's rank (attorch's layers were type 3
    for each)."""
    assert_valid(lint_layer(construct, call))


def test_a_tensor_method_taken_as_a_value_is_still_hidden_compute():
    result = lint_call("lintpkg_layers", "lintpkg_layers.sum_as_value(x, c)", params="x, c")
    assert 3 in result["regression_types"] and "stats.sum" in violation_calls(result)


def test_a_kernel_rebound_through_jit_and_tuner_calls_is_launched():
    """`k = triton.jit(k)` then `k = triton.heuristics({...})(k)` (unsloth's rope): the k each
    call wraps is the binding before it, and heuristics/autotune called with their configs give
    a decorator, not the configs' lambdas. It was type 2 (no kernel launched)."""
    result = lint_call("lintpkg_layers", "lintpkg_layers.halve(x)")
    assert_valid(result)
    assert result["checks"]["kernel_called_from_forward"]["called"] == ["_halve"]


@pytest.mark.parametrize("call, torch_op", [("lintpkg_layers.wrapped_launch(x)", None),
                                            ("lintpkg_layers.wrapped_launch(x, 0.1)", "torch.randint"),
                                            ("lintpkg_layers.wrapped_launch(x, c)", "torch.randint")])
def test_a_launch_through_wrap_triton_and_an_ordering_of_known_numbers(call, torch_op):
    """torch.library.wrap_triton(k)[grid](...) launches k (flash-attention's layer norm and rotary
    were type 2); `dropout_p > 0.0` with dropout_p known decides its branch (< <= > >= on
    numbers were never decided)."""
    result = lint_call("lintpkg_layers", call, params="x, c")
    assert_verdict(result, torch_op, "_double_kernel")


def test_a_kernel_passed_through_function_apply_is_launched():
    """Fn.apply(x, kernel) is forward(ctx, x, kernel): the kernel forward launches as its
    parameter is the one apply was given (kernl's layer norm was type 2: the arguments were
    matched to forward's parameters from ctx on)."""
    result = lint_call("lintpkg_layers", "lintpkg_layers.through_apply(x)")
    assert_valid(result)
    assert result["checks"]["kernel_called_from_forward"]["called"] == ["_double_kernel"]


@pytest.mark.parametrize("call, torch_op", [
    ("lintpkg_layers.needs_triton(x)", None),
    ("lintpkg_layers.through_helper(x)", None),
    ("lintpkg_layers.scaled(x)", None),
    ("lintpkg_layers.signed(x)", None),
    ("lintpkg_layers.signed(x, c)", "torch.mul"),
    ("lintpkg_layers.through_custom_op(x)", None),
    ("lintpkg_layers.through_torch_custom_op(x)", "torch.mul"),
])
def test_torchaos_shapes(call, torch_op):
    """torch.utils._triton.has_triton() is a question; a kernel a helper gives back is launched;
    F.ScalingType.TensorWise is an enum; `for s in signs or ():` with signs None never runs;
    torch.ops.<the library's namespace>.<op>(...) runs what the library registered for it (the
    CUDA key's `_launch`, not the Meta key's torch.mul) and a custom operator computing with torch
    is type 3 (a missed cheat before: the lint did not follow it)."""
    result = lint_call("lintpkg_layers", call, params="x, c")
    assert_verdict(result, torch_op, "_double_kernel")


@pytest.mark.parametrize("call, torch_op", [
    ("lintpkg_layers.through_side_op(x)", None),
    ("lintpkg_layers.through_side_call(x)", None),
    ("lintpkg_layers.through_side_torch(x)", "torch.mul"),
])
def test_a_custom_operator_registered_in_a_module_only_the_package_imports(call, torch_op):
    """bitsandbytes' backends: the registration (a decorator through an alias, or its call form
    register_kernel("ns::op", "cuda")(fn)) is in a module nothing on the path reads; the lint
    finds it by the operator's name. Each was type 1, and the torch one valid (a missed cheat)."""
    assert_verdict(lint_call("lintpkg_layers", call, params="x, c"), torch_op, "_double_kernel")


@pytest.mark.parametrize("imports, call", [("import lintpkg_layers", "lintpkg_layers.on_device(x)"),
                                           ("from lintpkg_layers.nsops.kern import doubled", "doubled(x)")])
def test_sglangs_shapes(imports, call):
    """torch.hpu.* and torch.get_device_module(device) are device questions, as torch.cuda.* is;
    a module in a folder without __init__.py inside the package (a namespace portion, as
    sglang's srt/) is found: the lint stopped with an internal error (KeyError) on every sglang
    operator."""
    assert_verdict(lint_call("lintpkg_layers", call, imports=imports), None, "_double_kernel")


@pytest.mark.parametrize("imports, call", [("import lintpkg_layers", "lintpkg_layers.fake_aware(x)"),
                                           ("import lintpkg_layers", "lintpkg_layers.through_registered_helper(x)"),
                                           ("from lintpkg_layers import tripled", "tripled(x)")])
def test_vllms_shapes(imports, call):
    """isinstance(x, FakeTensor) asks a type; torch.from_numpy converts; an operator registered
    through a helper with a literal name (direct_register_custom_op("lora_shrink", _lora_shrink))
    is followed, and the library's op exported as a name (`lora_shrink = torch.ops.vllm.lora_shrink`)
    called from the implementation is the library's, not "a dispatcher operator called directly";
    a module the library does not ship (an optional import) no longer stops the lint with an
    internal error where torch.ops is reached."""
    assert_verdict(lint_call("lintpkg_layers", call, imports=imports), None, "_double_kernel")
