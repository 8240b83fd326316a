"""The operator table: one record per primitive / public function.

Every table-driven check in the project (eager values against NumPy, jit
against eager, grad, vmap and bad inputs; tests/test_op_table.py) is driven
from this table, so adding an operator to microjax_rs means adding one record
to the module of its family.

A record names the microjax callable by a dotted path on the `microjax_rs`
package ("lax.add", "numpy.sin"), resolved lazily so that a missing function
fails its own tests instead of the whole module. The reference is a NumPy
callable with the *same signature*; it receives NumPy arrays.

A record's ``cases`` are (shapes, static positional args, static kwargs)
triples. Array arguments come first (made by ``args_maker`` from the case's
shapes and the dtype under test), then the static positional args, then the
static kwargs. The value ``DTYPE`` inside static args/kwargs is replaced by
the NumPy dtype under test (for creation functions such as ``zeros``).

Expected dtype: the NumPy reference's result dtype, canonicalized the way JAX
does (64-bit -> 32-bit unless x64 is on), unless the record gives
``out_dtype``. Expected values: the reference run on the inputs upcast to
float64 (float inputs only; integer/bool semantics such as wrapping stay in
their own dtype), cast to the expected dtype, compared with the per-dtype
tolerance.

Modules: ``_record`` (the record types, dtypes, tolerances, argument makers,
inputs and expected results of a case); one module of records per family:
``elementwise``, ``structural`` (shapes and slicing), ``reductions``, ``dot``,
``creation``, ``jnp`` (the rest of jax.numpy / nn / scipy.special), ``complex_ops`` (complex64/complex128
rows and the complex-part functions), ``complex_ordering`` (lexicographic ordering of complex
values, the other functions JAX defines on complex operands, and JAX's errors on the rest),
``complex_linalg`` (linear algebra on complex matrices, the nonsymmetric eigenproblem, Hessenberg
reduction, roots), ``real_schur`` (the real Schur form of real matrices), ``jnp_more``
(insert/delete, set functions, histograms, cov, index helpers), ``jnp_numeric``
(polynomials, windows, ufunc methods, calculus, bit packing), ``sort``,
``gather`` (gather / scatter / indexing), ``linalg``, ``conv`` (convolutions
and windowed reductions), ``special`` (lax special functions and jax.scipy.special), ``fft`` (lax.fft, jax.numpy.fft,
jax.scipy.fft), ``scipy_misc`` (the array functions of the smaller
`jax.scipy` modules), ``surface`` (aliases and the rest of the public
surface), ``random``, ``random_distributions``, ``lax_more`` (lax functions composed from
other primitives); ``errors`` (the bad inputs attached to the records).
"""
from . import (
    complex_linalg,
    complex_ops,
    complex_ordering,
    conv,
    creation,
    dot,
    elementwise,
    errors,
    fft,
    gather,
    jnp,
    jnp_more,
    lax_more,
    jnp_numeric,
    linalg,
    nn_more,
    random,
    random_distributions,
    real_schur,
    reductions,
    scipy_misc,
    sort,
    stats,
    special,
    structural,
    surface,
)
from ._record import (
    _BFLOAT16,
    Case,
    OpErr,
    OpRecord,
    canonicalize_dtype,
    case_seed,
    is_float,
    make_inputs,
    np_dtype,
    reference,
    resolve,
    tolerance,
    x64_enabled,
)

# The records of the operator families (the aliases of `surface` copy them).
_OPERATORS: tuple = (
    elementwise.RECORDS
    + structural.RECORDS
    + reductions.RECORDS
    + dot.RECORDS
    + creation.RECORDS
    + jnp.RECORDS
    + jnp_more.RECORDS
    + jnp_numeric.RECORDS
    + sort.RECORDS
    + gather.RECORDS
    + linalg.RECORDS
    + conv.RECORDS
    + scipy_misc.RECORDS
    + nn_more.RECORDS
    + stats.RECORDS
    + lax_more.RECORDS
    + special.RECORDS
    + complex_ops.RECORDS
    + complex_ordering.RECORDS
    + complex_linalg.RECORDS
    + real_schur.RECORDS
    + fft.RECORDS
)

# Every record, with its bad inputs attached.
RECORDS: tuple = errors.with_errors(_OPERATORS + surface.aliases(_OPERATORS) + surface.RECORDS + random.RECORDS
                                     + random_distributions.RECORDS)

# The core of lax and jax.numpy: every name here must have a record, whatever
# the coverage test's exemptions say (test_op_table checks it).
CORE_NAMES = (
    "lax.add lax.sub lax.mul lax.div lax.neg lax.max lax.min lax.pow lax.integer_pow lax.exp lax.log "
    "lax.sin lax.cos lax.tanh lax.logistic lax.sqrt lax.abs lax.sign lax.eq lax.ne lax.lt lax.le lax.gt "
    "lax.ge lax.select_n lax.convert_element_type lax.broadcast_in_dim lax.reshape lax.transpose "
    "lax.squeeze lax.reduce_sum lax.reduce_max lax.dot_general lax.iota "
    "numpy.sin numpy.exp numpy.tanh numpy.sum numpy.dot numpy.matmul numpy.reshape numpy.transpose "
    "numpy.where numpy.maximum numpy.zeros numpy.ones numpy.arange numpy.array numpy.asarray"
).split()


# ----------------------------------------------------------------- tiers


def dtype_class(name: str) -> str:
    """float / int / uint / bool / complex: the tiers keep one dtype of each."""
    dt = np_dtype(name)
    if is_float(dt):
        return "float"
    return {"i": "int", "u": "uint", "b": "bool", "c": "complex"}[dt.kind]


def tier_dtypes(rec: OpRecord) -> tuple:
    """One dtype per class in the record's dtypes, float32 / int32 preferred."""
    chosen = {}
    for dt in sorted(rec.dtypes, key=lambda d: d not in ("float32", "int32", "uint32")):
        chosen.setdefault(dtype_class(dt), dt)
    return tuple(dt for dt in rec.dtypes if dt in chosen.values())


def tier_cases(full: bool, records=RECORDS):
    """All (record, dtype, case) triples (full tier), or each record's cases
    for one dtype per dtype class (the CI tier)."""
    for rec in records:
        for dt in (rec.dtypes if full else tier_dtypes(rec)):
            for case in rec.cases:
                yield rec, dt, case


def case_id(rec: OpRecord, dtype: str, case: Case) -> str:
    return f"{rec.name}-{dtype}-{case.label()}"
