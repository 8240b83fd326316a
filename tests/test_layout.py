"""Layout of the Python package: the import layers core -> lax -> numpy -> api
(a module imports nothing from a layer above it), no import cycle between
modules, no module over 1,500 lines, and `microjax_rs.numpy` a namespace of
re-exports that keeps every public name it has."""
import ast
import os

import pytest

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "microjax_rs")

# Lowest first. A module belongs to the layer of its longest matching prefix
# (whole name components); every other module of the package (api,
# transforms, devices, random, nn, scipy, the package __init__) is in "api".
LAYERS = ("core", "lax", "numpy", "api")
LAYER_PREFIXES = (
    ("core", ("microjax_rs._core", "microjax_rs._trace_cache", "microjax_rs._lru", "microjax_rs.dtypes", "microjax_rs.errors", "microjax_rs.config",
              "microjax_rs.tree_util", "microjax_rs.tree", "microjax_rs.core", "microjax_rs.interpreters",
              "microjax_rs._src", "microjax_rs.sharding")),
    ("lax", ("microjax_rs.lax", "microjax_rs._src.lax")),
    ("numpy", ("microjax_rs.numpy", "microjax_rs._src.numpy")),
    # JAX's backend view (`jax._src.xla_bridge`) is over the devices module.
    ("api", ("microjax_rs._src.xla_bridge", "microjax_rs._src.test_util", "microjax_rs._src.api",
             "microjax_rs._src.ad_checkpoint", "microjax_rs._src.array", "microjax_rs._src.random",
             "microjax_rs._src.debugger", "microjax_rs._src.program_api",
             "microjax_rs._src.spmd_collectives", "microjax_rs._src.global_array")),
)

# The only imports of an upper layer from a lower one: function-level, where
# the lower module calls into something that is defined above it.
# (importing module, imported module) -> why
UPWARD_LAZY_IMPORTS = {
    ("microjax_rs.lax._control_flow", "microjax_rs._vmap"):
        "lax.map(batch_size=) is defined as a scan of the vmap transform",
    ("microjax_rs.lax._control_flow", "microjax_rs._devices"):
        "lax.platform_dependent picks the branch of the default backend's platform",
    ("microjax_rs.lax.parallel", "microjax_rs._devices"):
        "with_sharding_constraint places a concrete value as its sharding says (device_put)",
    ("microjax_rs.lax.parallel", "microjax_rs._src.spmd_collectives"):
        "a collective over a mesh axis spanning processes combines the processes' values with "
        "a host callback whose derivative is a custom_vjp",
    ("microjax_rs.lax._solves", "microjax_rs.custom_derivatives"):
        "custom_root / custom_linear_solve define their derivatives with custom_jvp and linear_call",
    ("microjax_rs.lax._solves", "microjax_rs._grad"):
        "custom_linear_solve transposes matvec with linear_transpose and differentiates it with jvp",
    ("microjax_rs.lax._reductions", "microjax_rs._vmap"):
        "lax.reduce / reduce_window with a Python computation apply it per element with vmap",
    ("microjax_rs.lax._composite", "microjax_rs.api"):
        "a primitive defined by a composition gets its output shapes by eval_shape of the composition",
    ("microjax_rs.lax._composite", "microjax_rs._grad"):
        "a primitive defined by a composition differentiates as jvp of the composition",
    ("microjax_rs.lax._composite", "microjax_rs._vmap"):
        "a primitive defined by a composition batches as vmap of the composition",
    ("microjax_rs._src.numpy.vectorize", "microjax_rs._vmap"):
        "jnp.vectorize is defined by the vmap transform over the loop dimensions",
    ("microjax_rs._src.numpy.array_api_metadata", "microjax_rs._devices"):
        "the array API inspection object lists the devices of every platform in use",
    ("microjax_rs._src.numpy.util", "microjax_rs._devices"):
        "the device= keyword of the jnp creation functions places the result with jax.device_put",
}

MAX_LINES = 1500


def _modules():
    """Module name -> file path, for every .py file of the package."""
    out = {}
    root = os.path.dirname(PKG)
    for dirpath, _, files in os.walk(PKG):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                name = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return out


MODULES = _modules()


def _layer(module):
    matches = [(len(p), layer) for layer, prefixes in LAYER_PREFIXES for p in prefixes
               if module == p or module.startswith(p + ".")]
    return max(matches)[1] if matches else "api"


def _imports(module):
    """(imported module, lazy) for every import of the package's modules in
    `module`; lazy: inside a function."""
    path = MODULES[module]
    package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
    found = []

    def targets(node):
        if isinstance(node, ast.Import):
            return [a.name for a in node.names if a.name.split(".")[0] == "microjax_rs"]
        base = package[:len(package) - node.level + 1] if node.level else []
        target = ".".join(base + ([node.module] if node.module else []))
        if not target.startswith("microjax_rs"):
            return []
        # `from pkg import sub` imports the submodule; `from mod import name` the module
        return [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES or a.name == "_core" else target
                for a in node.names]

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend((t, lazy) for t in targets(child))
            visit(child, lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    with open(path, encoding="utf-8") as f:
        visit(ast.parse(f.read(), path), False)
    return found


def _upward_imports():
    """(module, imported module, lazy) where the imported module is in a higher layer."""
    out = []
    for module in sorted(MODULES):
        for target, lazy in _imports(module):
            if LAYERS.index(_layer(target)) > LAYERS.index(_layer(module)):
                out.append((module, target, lazy))
    return out


def test_layer_map_classifies_the_package():
    assert _layer("microjax_rs.core") == "core"
    assert _layer("microjax_rs.interpreters.partial_eval") == "core"
    assert _layer("microjax_rs.lax._control_flow") == "lax"
    assert _layer("microjax_rs._src.numpy.ufuncs") == "numpy"
    assert _layer("microjax_rs._src.util") == "core"
    assert _layer("microjax_rs.numpy.linalg") == "numpy"
    assert _layer("microjax_rs.api") == "api"
    assert _layer("microjax_rs.random") == "api"
    assert _layer("microjax_rs.tree_util_extra") == "api"  # a prefix matches whole name components only
    for module in ("microjax_rs.core", "microjax_rs.lax", "microjax_rs._src.numpy.lax_numpy", "microjax_rs.api"):
        assert module in MODULES


def test_import_scanner_sees_relative_and_lazy_imports():
    imports = _imports("microjax_rs.lax._control_flow")
    assert ("microjax_rs.interpreters.partial_eval", False) in imports
    assert ("microjax_rs._vmap", True) in imports
    assert ("microjax_rs.numpy", False) in _imports("microjax_rs.nn")
    assert ("microjax_rs.numpy.linalg", False) in _imports("microjax_rs.numpy")


def test_no_module_imports_an_upper_layer():
    """core -> lax -> numpy -> api: lax never imports numpy, numpy never the
    api; the few function-level exceptions are listed with their reason."""
    bad = [(m, t) for m, t, lazy in _upward_imports() if not lazy or (m, t) not in UPWARD_LAZY_IMPORTS]
    assert not bad, f"imports of an upper layer (move the shared code down a layer): {bad}"


def test_upward_import_exceptions_are_current():
    used = {(m, t) for m, t, _ in _upward_imports()}
    stale = sorted(set(UPWARD_LAZY_IMPORTS) - used)
    assert not stale, f"UPWARD_LAZY_IMPORTS names imports that no longer exist (remove them): {stale}"
    assert not any(t.startswith("microjax_rs.numpy") or t.startswith("microjax_rs._src.numpy")
                   for m, t in UPWARD_LAZY_IMPORTS if _layer(m) in ("core", "lax"))


def test_module_level_imports_have_no_cycle():
    """Module-level imports form no cycle (a submodule reading names of its
    own package, as lax/linalg.py does, aside)."""
    graph = {}
    for module in MODULES:
        graph[module] = {t for t, lazy in _imports(module)
                         if not lazy and t in MODULES and t != module and not module.startswith(t + ".")}
    state = {}

    def cycle_from(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
            if nxt not in state:
                found = cycle_from(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = cycle_from(module, [module])
            assert not found, f"import cycle: {' -> '.join(found)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_is_at_most_1500_lines(module):
    with open(MODULES[module], encoding="utf-8") as f:
        n = sum(1 for _ in f)
    assert n <= MAX_LINES, f"{MODULES[module]} has {n} lines (split it by subject)"


@pytest.mark.parametrize("module", ["microjax_rs.numpy", "microjax_rs.numpy.linalg"])
def test_public_numpy_modules_only_reexport(module):
    with open(MODULES[module], encoding="utf-8") as f:
        body = ast.parse(f.read()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    logic = [type(node).__name__ for node in body if not isinstance(node, (ast.Import, ast.ImportFrom))]
    assert not logic, f"{module} should only import from microjax_rs._src.numpy, found {logic}"


# Every public name of `microjax_rs.numpy` and `microjax_rs.numpy.linalg`.
NUMPY_NAMES = """
ArrayImpl Tracer abs absolute acos acosh add all allclose alltrue amax amin any arange arccos arccosh arcsin
arcsinh arctan arctan2 arctanh argmax argmin argpartition argsort argwhere around array array_equal array_equiv
array_split asarray asin asinh astype atan atan2 atanh atleast_1d atleast_2d atleast_3d average bfloat16 bincount
bitwise_and bitwise_invert bitwise_not bitwise_or bitwise_xor bool_ broadcast_arrays broadcast_shapes broadcast_to
builtins can_cast cbrt ceil clip column_stack complexfloating concat concatenate conj conjugate convolve copy
copysign core correlate cos cosh count_nonzero cross cumprod cumsum cumulative_prod cumulative_sum deg2rad degrees
diag diagflat diagonal diff divide divmod dot dsplit dstack dtype e ediff1d einsum einsum_path empty empty_like
equal exp exp2 expand_dims expm1 eye fill_diagonal finfo fix flatnonzero flip fliplr flipud float16 float32
float64 float_ float_power floating floor floor_divide fmax fmin fmod full full_like geomspace generic greater
greater_equal heaviside hsplit hstack hypot identity iinfo imag indices inexact inf inner int16 int32 int64 int8
int_ integer interp invert isclose iscomplexobj isdtype isfinite isinf isnan isneginf isposinf isrealobj isscalar
issubdtype kron lax ldexp left_shift less less_equal lexsort linalg linspace log log10 log1p log2 logaddexp
logaddexp2 logical_and logical_not logical_or logical_xor logspace matmul matrix_transpose max maximum mean median
meshgrid min minimum mod modf moveaxis multiply nan nan_to_num nanargmax nanargmin nancumprod nancumsum nanmax
nanmean nanmedian nanmin nanpercentile nanprod nanquantile nanstd nansum nanvar ndarray ndim negative newaxis
nonzero not_equal number ones ones_like outer pad partition percentile pi piecewise positive pow power prod
product promote_types ptp put_along_axis quantile rad2deg radians ravel ravel_multi_index real reciprocal
remainder repeat reshape result_type right_shift rint roll rollaxis rot90 round row_stack searchsorted select sign
signbit signedinteger sin sinc sinh size sometrue sort split sqrt square squeeze stack std subtract sum swapaxes
take take_along_axis tan tanh tensordot tile trace transpose tri tril triu true_divide trunc uint16 uint32 uint64
uint8 unique unique_counts unique_values unravel_index unsignedinteger vander var vdot vecdot vsplit vstack where
where_ zeros zeros_like
""".split()

LINALG_NAMES = """
EighResult QRResult SVDResult SlogdetResult cholesky cross det diagonal eig eigh eigvals eigvalsh inv lax lstsq
matmul matrix_norm matrix_power matrix_rank matrix_transpose multi_dot norm outer pinv qr slogdet solve svd svdvals
tensordot tensorinv tensorsolve trace vecdot vector_norm
""".split()


@pytest.mark.parametrize("module, names", [("numpy", NUMPY_NAMES), ("numpy.linalg", LINALG_NAMES)])
def test_public_numpy_names_are_kept(module, names):
    import importlib

    mod = importlib.import_module(f"microjax_rs.{module}")
    public = {n for n in dir(mod) if not n.startswith("_")}
    assert len(names) == len(set(names))
    missing = sorted(set(names) - public)
    assert not missing, f"microjax_rs.{module} lost public names: {missing}"
