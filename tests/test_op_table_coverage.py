"""The operator table covers the public surface: every public callable of the
array modules and every primitive has a record (tests/op_table/), or an
entry in EXEMPT saying why the table does not apply. EXEMPT itself must name
things that exist, so it cannot outlive the API it excuses.

Run this file directly (``python tests/test_op_table_coverage.py``) to print
the records x checks figures quoted in the README's testing section.
"""
import importlib
import types

import microjax_rs
import op_table as ot
import test_op_table as top
import pytest

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

# The modules whose public callables need records, as dotted paths on microjax_rs.
_STATS_DISTRIBUTIONS = (
    "bernoulli beta betabinom binom cauchy chi2 dirichlet expon gamma gennorm geom gumbel_l gumbel_r laplace "
    "logistic multinomial multivariate_normal nbinom norm pareto poisson t truncnorm uniform vonmises wrapcauchy"
).split()
MODULES = ("numpy", "numpy.linalg", "numpy.fft", "scipy.fft", "lax", "lax.linalg", "nn", "nn.initializers", "scipy.special", "scipy.linalg",
           "random", "scipy.stats", "image", "scipy.signal", "scipy.integrate", "scipy.ndimage", "scipy.cluster.vq",
           "scipy.interpolate", "scipy.optimize", "scipy.sparse.linalg", "scipy.spatial.transform",
           "experimental.ode", "custom_batching", "debug", "profiler") + tuple(f"scipy.stats.{d}" for d in _STATS_DISTRIBUTIONS)


def _exempt(reason, *names):
    return {name: reason for name in names}


_DTYPE_CLASSES = tuple(f"numpy.{n}" for n in (
    "bfloat16", "bool_", "cdouble", "complex128", "complex64", "complex_", "complexfloating", "csingle",
    "dtype", "float16", "float32", "float64", "float_", "floating",
    "generic", "inexact", "int16", "int32", "int64", "int8", "int_", "integer", "number", "signedinteger",
    "uint16", "uint32", "uint64", "uint8", "unsignedinteger",
    # JAX's narrow dtypes: names only, making an array of one raises TypeError (tests/test_narrow_dtypes.py)
    "int1", "int2", "int4", "uint1", "uint2", "uint4", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"))

# public name -> why it has no operator-table record
EXEMPT = {
    "lax.FftType": "the enum of lax.fft's transform types, not an array function (tests/test_fft.py)",
    **_exempt("host callback / printing inside transformed code (tests/test_callbacks.py)",
              "debug.callback", "debug.print"),
    **_exempt("cache and buffer-pool counters, not array functions (tests/test_memory.py)",
              "debug.buffer_pool_clear", "debug.buffer_pool_stats", "debug.compile_cache_clear",
              "debug.compile_cache_stats"),
    **_exempt("jit trace-cache counters (tests/test_jit_cache.py)", "debug.jit_cache_stats"),
    **_exempt("stateful draws, new values at every call: no fixed values to tabulate; range, dtype, fresh draws "
              "under jit and JAX's errors checked in tests/test_lax_primitive_objects.py", "lax.rng_uniform"),
    **_exempt("identity that lifts a value into the active trace; what it returns inside and outside traces "
              "checked in tests/test_lax_primitive_objects.py", "lax.stage"),
    **_exempt("executor plan statistics of a traced function (tests/test_stages.py)", "debug.plan_stats"),
    **_exempt("array exchange through the DLPack protocol, every dtype round-tripped (tests/test_dlpack.py)",
              "numpy.from_dlpack"),
    **_exempt("sharding inspection / text picture, no array result (tests/test_sharding_views.py)",
              "debug.inspect_array_sharding", "debug.visualize_array_sharding", "debug.visualize_sharding"),
    **_exempt("profiler trace control and annotations, they write a trace file (tests/test_profiler.py)",
              "profiler.ProfileOptions", "profiler.StepTraceAnnotation", "profiler.TraceAnnotation",
              "profiler.annotate_function", "profiler.start_trace", "profiler.stop_trace", "profiler.trace"),
    **_exempt("dtype / scalar type object, not an array function (tests/test_numpy_surface.py)", *_DTYPE_CLASSES),
    **_exempt("array type (isinstance target), not a function", "numpy.ndarray", "numpy.ArrayImpl", "numpy.Tracer",
              "lax.ArrayImpl", "lax.Tracer", "random.PRNGKeyArray"),
    **_exempt("dtype query returning a Python value, not an array (tests/test_numpy_surface.py)",
              "numpy.can_cast", "numpy.finfo", "numpy.iinfo", "numpy.isdtype", "numpy.issubdtype",
              "numpy.promote_types", "numpy.result_type", "numpy.iscomplexobj", "numpy.isrealobj",
              "numpy.isscalar"),
    **_exempt("shape query returning Python ints / tuples, not an array",
              "numpy.ndim", "numpy.shape", "numpy.size", "numpy.broadcast_shapes", "numpy.einsum_path",
              "lax.padtype_to_pads", "lax.conv_dimension_numbers", "lax.broadcast_shapes"),
    **_exempt("internal alias of jnp.where for functions whose where= keyword shadows it (not JAX API)",
              "numpy.where_"),
    **_exempt("NamedTuple result type of a linalg function, not a function",
              "numpy.linalg.EighResult", "numpy.linalg.QRResult", "numpy.linalg.SVDResult",
              "numpy.linalg.SlogdetResult"),
    **_exempt("parameter class (dimension numbers / enum) consumed by a recorded primitive",
              "lax.ConvDimensionNumbers", "lax.GatherDimensionNumbers", "lax.GatherScatterMode",
              "lax.ScatterDimensionNumbers", "lax.RoundingMethod"),
    **_exempt("the primitive class itself (tests/test_tracing.py)", "lax.Primitive"),
    **_exempt("matmul precision enum, a parameter (tests/test_ecosystem_api.py)", "lax.Precision"),
    **_exempt("accuracy parameter of the transcendental functions (tests/test_lax_more.py)",
              "lax.AccuracyMode", "lax.Tolerance"),
    **_exempt("file I/O of NumPy .npy/.npz data (tests/test_ecosystem_api.py)",
              "numpy.load", "numpy.save", "numpy.savez"),
    **_exempt("higher-order: vectorizes a Python callable (tests/test_ecosystem_api.py)", "numpy.vectorize"),
    **_exempt("output shape set by the values, so it needs a concrete input and has no jit form "
              "(tests/test_jnp_extras.py)", "numpy.trim_zeros"),
    **_exempt("array from bytes or text, not from arrays (tests/test_jnp_extras.py)",
              "numpy.frombuffer", "numpy.fromstring"),
    **_exempt("raises NotImplementedError as in JAX (tests/test_jnp_extras.py)", "numpy.fromiter", "numpy.fromfile"),
    **_exempt("printing / Python-value helper, not an array function (tests/test_jnp_extras.py)",
              "numpy.iterable", "numpy.array_repr", "numpy.array_str", "numpy.printoptions",
              "numpy.get_printoptions", "numpy.set_printoptions"),
    **_exempt("ufunc class / ufunc from a Python callable: methods checked in tests/test_jnp_numeric.py",
              "numpy.ufunc", "numpy.frompyfunc"),
    **_exempt("scalar type name / NumPy scalar class, not an array function (tests/test_jnp_numeric.py)",
              "numpy.bool", "numpy.single", "numpy.double", "numpy.uint", "numpy.character", "numpy.flexible",
              "numpy.object_"),
    **_exempt("higher-order control flow taking Python callables (tests/test_control_flow.py)",
              "lax.cond", "lax.fori_loop", "lax.map", "lax.scan", "lax.switch", "lax.while_loop"),
    **_exempt("returns the key implementation object, not an array (tests/test_random.py)", "random.key_impl"),
    **_exempt("pytree class built from arrays, called on points (tests/test_scipy_misc.py)",
              "scipy.interpolate.RegularGridInterpolator", "scipy.spatial.transform.Rotation",
              "scipy.spatial.transform.Slerp"),
    **_exempt("higher-order: minimizes / solves with a Python callable (tests/test_scipy_misc.py)",
              "scipy.optimize.minimize", "scipy.sparse.linalg.cg", "scipy.sparse.linalg.gmres",
              "scipy.sparse.linalg.bicgstab"),
    **_exempt("NamedTuple result type of minimize, not a function", "scipy.optimize.OptimizeResults"),
    **_exempt("higher-order: integrates a Python callable (tests/test_ode.py)", "experimental.ode.odeint"),
    **_exempt("initializer factory or (key, shape, dtype) initializer: values against JAX's for the same key "
              "(tests/test_nn_initializers.py)",
              *(f"nn.initializers.{n}" for n in (
                  "Initializer constant delta_orthogonal glorot_normal glorot_uniform he_normal he_uniform "
                  "kaiming_normal kaiming_uniform lecun_normal lecun_uniform normal ones orthogonal "
                  "truncated_normal uniform variance_scaling xavier_normal xavier_uniform zeros").split())),
    **_exempt("built on jax.scipy.special.gammainc / gammaincc / betainc: against SciPy, with grads, jit and vmap, "
              "in tests/test_stats_incomplete.py (skipped while those special functions are absent)",
              *(f"scipy.stats.{n}" for n in (
                  "gamma.cdf gamma.logcdf gamma.sf gamma.logsf chi2.cdf chi2.logcdf chi2.sf chi2.logsf "
                  "beta.cdf beta.logcdf beta.sf beta.logsf poisson.cdf gennorm.cdf").split())),
    **_exempt("class holding a fitted estimate; its methods are checked against SciPy in tests/test_scipy_stats.py",
              "scipy.stats.gaussian_kde"),
    **_exempt("returns a (mode, count) NamedTuple; checked against SciPy in tests/test_scipy_stats.py",
              "scipy.stats.mode"),
    **_exempt("resampling with no NumPy reference: against values recorded from JAX, with finite-difference "
              "grads, jit and vmap (tests/test_image.py)",
              "image.resize", "image.scale_and_translate"),
    **_exempt("enum of resampling methods, a parameter (tests/test_image.py)", "image.ResizeMethod"),
    **_exempt("returns the key dtype object, not an array (tests/test_random_distributions.py)",
              "random.key_dtype"),
    **_exempt("precision / dimension-number parameter types of the products (tests/test_lax_more.py)",
              "lax.DotAlgorithm", "lax.DotAlgorithmPreset", "lax.DotDimensionNumbers", "lax.PrecisionLike",
              "lax.ConvGeneralDilatedDimensionNumbers", "lax.RaggedDotDimensionNumbers"),
    **_exempt("static shape helper returning Python ints / tuples (tests/test_lax_more.py)",
              "lax.conv_general_permutations", "lax.conv_general_shape_tuple", "lax.conv_shape_tuple",
              "lax.conv_transpose_shape_tuple", "lax.reduce_window_shape_tuple", "lax.shape_as_value", "lax.dtype"),
    **_exempt("algorithm enum, a parameter (tests/test_lax_more.py)", "lax.RandomAlgorithm",
              "lax.linalg.EighImplementation", "lax.linalg.SvdAlgorithm"),
    **_exempt("algorithm enum, a parameter of eig (tests/test_complex_linalg.py)", "lax.linalg.EigImplementation"),
    **_exempt("random bits and the advanced state, recorded from JAX 0.10.2 (tests/test_lax_more.py)",
              "lax.rng_bit_generator"),
    **_exempt("function transformation with a user batching rule (tests/test_custom_batching.py)",
              "custom_batching.custom_vmap", "custom_batching.sequential_vmap"),
    **_exempt("debugging side effect inside transformed code, returns None (tests/test_debug_tools.py)",
              "debug.breakpoint", "debug.log"),
    **_exempt("higher-order: takes Python callables (tests/test_lax_more.py)",
              "lax.custom_linear_solve", "lax.custom_root", "lax.platform_dependent", "lax.scatter_apply"),
    **_exempt("tokens and the dead-code sink carry no array values; equations, jit, grad and vmap checked in "
              "tests/test_tokens_and_composite.py", "lax.after_all", "lax.create_token", "lax.dce_sink"),
    **_exempt("higher-order: wraps a Python decomposition (tests/test_tokens_and_composite.py)", "lax.composite"),
    **_exempt("effect types of jaxpr equations, not array functions (tests/test_program_api_extras.py)",
              "debug.DebugEffect", "debug.OrderedDebugEffect"),
    **_exempt("profile reading, memory profiles and the profiler server, no array results "
              "(tests/test_profiler_data.py)", "profiler.ProfileData", "profiler.ProfileEvent",
              "profiler.ProfilePlane", "profiler.device_memory_profile", "profiler.register_subprocess",
              "profiler.save_device_memory_profile", "profiler.start_server", "profiler.stop_server"),
}

# primitive -> the public function whose record exercises it (when the names differ)
PRIMITIVE_RECORDS = {
    "and": "lax.bitwise_and", "or": "lax.bitwise_or", "xor": "lax.bitwise_xor", "not": "lax.bitwise_not",
    "reduce_window_max": "lax.reduce_window", "reduce_window_min": "lax.reduce_window",
    "reduce_window_sum": "lax.reduce_window",
    # the JVP and transpose of reduce_window_max: run by that record's grad checks
    "select_and_gather_add": "lax.reduce_window", "select_and_scatter_add": "lax.reduce_window",
    "threefry2x32": "random.threefry_2x32", "scatter-add": "lax.scatter_add", "scatter-mul": "lax.scatter_mul",
    "scatter-min": "lax.scatter_min", "scatter-max": "lax.scatter_max",
    "name": "ad_checkpoint.checkpoint_name",
    "regularized_incomplete_beta": "lax.betainc",
}

# primitive -> why it has no record
EXEMPT_PRIMITIVES = {
    **_exempt("collective over a named axis, needs pmap/vmap axis_name (tests/test_collectives.py)",
              "all_gather", "all_to_all", "axis_index", "pmax", "pmin", "ppermute", "psum", "reduce_scatter"),
    **_exempt("higher-order control flow (tests/test_control_flow.py)", "cond", "scan", "while"),
    **_exempt("custom-derivative machinery (tests/test_custom_derivatives.py)",
              "custom_jvp_call", "custom_vjp_call", "custom_lin", "linear_call"),
    **_exempt("collective between processes, needs an MPI launcher (tests/test_distributed.py)",
              "process_allreduce", "process_allgather", "process_broadcast", "process_pvary",
              "process_share"),
    **_exempt("host callback (tests/test_callbacks.py)", "debug_callback", "io_callback", "pure_callback"),
    "pjit": "nested jit: every record's jit check traces through it (tests/test_tracing.py)",
    "checkpoint": "remat wrapper (tests/test_autodiff.py)",
}


def public_callables():
    """Dotted names ("numpy.sin") of the public callables of MODULES."""
    names = set()
    for dotted in MODULES:
        mod = importlib.import_module(f"microjax_rs.{dotted}")
        public = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for name in public:
            obj = getattr(mod, name, None)
            if callable(obj) and not isinstance(obj, types.ModuleType):
                names.add(f"{dotted}.{name}")
    return names


def covered_names():
    """Public names with a record: the record's path, and its name without the `[variant]`."""
    return {rec.dotted for rec in ot.RECORDS} | {rec.name.split("[")[0] for rec in ot.RECORDS}


def test_every_public_callable_has_a_record():
    missing = sorted(public_callables() - covered_names() - set(EXEMPT))
    assert not missing, f"public functions without an operator-table record (or EXEMPT entry): {missing}"


def test_every_primitive_has_a_record():
    covered = covered_names()
    missing = []
    for prim in microjax_rs._core.primitive_names():
        candidates = {f"lax.{prim}", f"lax.{prim.replace('-', '_')}", f"lax.linalg.{prim}",
                      PRIMITIVE_RECORDS.get(prim)}
        if not candidates & covered and prim not in EXEMPT_PRIMITIVES:
            missing.append(prim)
    assert not missing, f"primitives without an operator-table record (or EXEMPT_PRIMITIVES entry): {missing}"


def test_exemptions_name_existing_things():
    stale = sorted(set(EXEMPT) - public_callables())
    assert not stale, f"EXEMPT names no public callable (remove them): {stale}"
    prims = set(microjax_rs._core.primitive_names())
    stale = sorted(set(EXEMPT_PRIMITIVES) - prims) + sorted(set(PRIMITIVE_RECORDS) - prims)
    assert not stale, f"primitive exemptions / mappings name no primitive: {stale}"
    unmapped = sorted(v for v in PRIMITIVE_RECORDS.values() if v not in covered_names())
    assert not unmapped, f"PRIMITIVE_RECORDS points at names without records: {unmapped}"


def test_exemptions_are_not_also_recorded():
    both = sorted(set(EXEMPT) & covered_names())
    assert not both, f"exempt names that have records (drop the exemption): {both}"


# ----------------------------------------------------------------- records x checks


def table_figures():
    """Records, cases and generated checks of each tier (for the README)."""
    recs = ot.RECORDS
    prims = microjax_rs._core.primitive_names()
    figures = {"records": len(recs), "public callables with records": len(public_callables() - set(EXEMPT)),
               "public callables exempt": len(EXEMPT),
               "primitives with records": len(set(prims) - set(EXEMPT_PRIMITIVES)),
               "primitives exempt": len(EXEMPT_PRIMITIVES),
               "error checks (bad input x eager/jit)": len(top.ERROR_CASES)}
    for tier, full in (("ci", False), ("full", True)):
        cases = list(ot.tier_cases(full=full))
        # eager, jit and one test per transform hook for every (record, dtype, case)
        figures[f"{tier}: record x dtype x case"] = len(cases)
        figures[f"{tier}: checks"] = len(cases) * (2 + len(top.TRANSFORM_CHECKS)) + len(top.ERROR_CASES)
    return figures


if __name__ == "__main__":
    for key, value in table_figures().items():
        print(f"{key}: {value}")
