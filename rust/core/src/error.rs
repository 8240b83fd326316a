//! The one error type of the core. Every variant names what failed (the
//! primitive, the rule, the shapes) so the binding can map it to the
//! exception a JAX user expects without parsing strings.

use thiserror::Error;

/// Result alias used across the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Every failure the core can report. No path reachable from user input or a
/// loaded program panics; it returns one of these.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// Operand shapes a primitive cannot accept (maps to `TypeError`/`ValueError`).
    #[error("{prim}: {reason}; got shapes {shapes}")]
    Shape {
        prim: &'static str,
        shapes: String,
        reason: String,
    },
    /// Shapes that do not broadcast together ([`crate::promote::broadcast_shapes`]).
    /// Named by an elementwise op with all ranks equal it is JAX's
    /// `TypeError` message, otherwise `jnp.broadcast_shapes`' `ValueError`
    /// one ([`Error::is_type_error`] tells which).
    #[error("{}", broadcast_message(.op.as_deref(), .shapes))]
    Broadcast {
        op: Option<String>,
        shapes: Vec<Vec<usize>>,
    },
    /// Operand dtypes a primitive cannot accept (maps to `TypeError`).
    #[error("{prim}: {reason}; got dtypes {dtypes}")]
    DType {
        prim: &'static str,
        dtypes: String,
        reason: String,
    },
    /// A parameter value a primitive cannot accept.
    #[error("{prim}: invalid parameter {param}: {reason}")]
    Param {
        prim: &'static str,
        param: &'static str,
        reason: String,
    },
    /// Wrong number of operands.
    #[error("{prim}: expected {expected} operands, got {got}")]
    Arity {
        prim: &'static str,
        expected: usize,
        got: usize,
    },
    /// Unknown primitive name (from Python `bind` or a parsed program).
    #[error("unknown primitive {0:?}")]
    UnknownPrimitive(String),
    /// A size computation overflowed (shape too large).
    #[error("{what}: size overflows ({detail})")]
    Overflow { what: &'static str, detail: String },
    /// Canonical text or an exported program could not be parsed.
    #[error("parse error at line {line}, column {col}: {msg}")]
    Parse {
        line: usize,
        col: usize,
        msg: String,
    },
    /// A host callback failed (the binding re-raises the callback's own
    /// exception).
    #[error("host callback failed: {0}")]
    HostCallback(String),
    /// The bytes of an exported program are malformed (`offset` into them).
    #[error("malformed exported program at byte {offset}: {msg}")]
    Format { offset: usize, msg: String },
    /// A jaxpr is not well typed.
    #[error("typecheck failed: {0}")]
    Typecheck(String),
    /// A resource limit of a loaded program was exceeded.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// A value given where a different kind was expected (bad dtype name, bad literal...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Implicit rank promotion refused by `jax_numpy_rank_promotion='raise'`
    /// ([`crate::promote::check_rank_promotion`]; maps to `ValueError`).
    #[error("{0}")]
    RankPromotion(String),
    /// Feature outside microjax_rs's scope (complex dtypes, ...): maps to `TypeError`.
    #[error("{0}")]
    Unsupported(String),
    /// A collective names an axis no enclosing map binds (maps to `NameError`).
    #[error("unbound axis name: {axis} (in {prim}); collectives need an enclosing vmap or pmap with that axis_name")]
    UnboundAxis { prim: &'static str, axis: String },
    /// A rule JAX also leaves undefined for some params (scatter-mul
    /// gradients with repeated indices, ...): maps to `NotImplementedError`.
    #[error("{0}")]
    NotImplemented(String),
    /// A buffer larger than the allocation budget
    /// ([`crate::array::budget`]), or one the allocator refused (maps to
    /// `MemoryError`).
    #[error("{what}: RESOURCE_EXHAUSTED: cannot allocate a {dtype}{shape} buffer of {bytes} bytes (max buffer budget: {budget} bytes, config option microjax_max_buffer_bytes)")]
    AllocationTooLarge {
        what: String,
        shape: String,
        dtype: &'static str,
        bytes: u128,
        budget: u64,
    },
    /// An allocation that would bring live memory over a live-memory
    /// budget ([`crate::array::live`]: the process's, or a run's counted
    /// from its start; maps to `MemoryError`).
    #[error("{what}: RESOURCE_EXHAUSTED: {bytes} more bytes with {live} bytes live exceed the {scope} of {limit} bytes")]
    MemoryBudget {
        what: String,
        bytes: u64,
        live: u64,
        limit: u64,
        scope: &'static str,
    },
    /// A pointer handed to the storage layer is not aligned for its element
    /// type (foreign memory; maps to `ValueError`).
    #[error("{what}: address {addr:#x} is not aligned to {align} bytes")]
    Misaligned {
        what: &'static str,
        addr: usize,
        align: usize,
    },
    /// A jaxpr variable was read before it was written (a malformed program).
    #[error("unbound variable {0}")]
    UnboundVar(String),
    /// The run was cancelled through its [`crate::exec::CancelToken`]
    /// (maps to `RuntimeError`).
    #[error("the run was cancelled")]
    Cancelled,
    /// The run passed its deadline ([`crate::exec::ExecCtx::with_deadline`],
    /// [`crate::export::Limits::timeout`]; maps to `TimeoutError`).
    #[error("the run exceeded its deadline")]
    DeadlineExceeded,
    /// The run's poll hook saw a pending signal (the Python binding's
    /// check of Ctrl-C; maps to the exception the signal handler raised,
    /// `KeyboardInterrupt` for SIGINT).
    #[error("the run was interrupted by a signal")]
    Interrupted,
    /// A CUDA device operation failed, or there is no CUDA device (names the
    /// operation; maps to `RuntimeError`).
    #[error("{0}")]
    Device(String),
    /// A collective between processes failed: no MPI library or
    /// communicator, an MPI error, or processes that called different
    /// collectives (maps to `RuntimeError`).
    #[error("{0}")]
    Collective(String),
}

impl Error {
    /// Shape error naming the primitive and the operand shapes.
    pub fn shape(prim: &'static str, shapes: &[&[usize]], reason: impl Into<String>) -> Self {
        Error::Shape {
            prim,
            shapes: format_shapes(shapes),
            reason: reason.into(),
        }
    }

    /// Dtype error naming the primitive and the operand dtypes.
    pub fn dtype(prim: &'static str, dtypes: &[crate::DType], reason: impl Into<String>) -> Self {
        let names: Vec<&str> = dtypes.iter().map(|d| d.name()).collect();
        Error::DType {
            prim,
            dtypes: format!("({})", names.join(", ")),
            reason: reason.into(),
        }
    }

    /// Whether JAX raises this error as a `TypeError` where the variant
    /// alone does not say (a broadcast error named by an op on shapes of
    /// one rank).
    pub fn is_type_error(&self) -> bool {
        match self {
            Error::Broadcast { op, shapes } => {
                op.is_some()
                    && shapes
                        .windows(2)
                        .all(|w| matches!(w, [a, b] if a.len() == b.len()))
            }
            _ => false,
        }
    }

    /// Wrong number of operands (or outputs) for primitive `prim`.
    pub fn arity(prim: &'static str, expected: usize, got: usize) -> Self {
        Error::Arity {
            prim,
            expected,
            got,
        }
    }

    /// `Ok` when `got` is `expected`, else `Error::Arity` naming `prim`.
    pub fn check_count(prim: &'static str, expected: usize, got: usize) -> Result<()> {
        if got == expected {
            Ok(())
        } else {
            Err(Error::arity(prim, expected, got))
        }
    }

    /// Parameter error.
    pub fn param(prim: &'static str, param: &'static str, reason: impl Into<String>) -> Self {
        Error::Param {
            prim,
            param,
            reason: reason.into(),
        }
    }
}

/// `(2, 3)` style rendering of shapes, as NumPy prints them.
pub fn format_shape(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

fn broadcast_message(op: Option<&str>, shapes: &[Vec<usize>]) -> String {
    let parts: Vec<String> = shapes.iter().map(|s| format_shape(s)).collect();
    let same_rank = shapes
        .windows(2)
        .all(|w| matches!(w, [a, b] if a.len() == b.len()));
    match op {
        Some(op) if same_rank => format!(
            "{op} got incompatible shapes for broadcasting: {}.",
            parts.join(", ")
        ),
        _ => format!(
            "Incompatible shapes for broadcasting: shapes=[{}]",
            parts.join(", ")
        ),
    }
}

fn format_shapes(shapes: &[&[usize]]) -> String {
    let parts: Vec<String> = shapes.iter().map(|s| format_shape(s)).collect();
    parts.join(" and ")
}
