//! The primitive set. `Primitive` is a two-level enum: family variants with
//! per-op tables (`UnaryOp`, `BinaryOp`, ...) so adding an elementwise op is
//! one line per rule kind. Each rule kind lives in its own module as one
//! exhaustive `match`:
//!
//! * `shape`     — abstract evaluation (output avals, operand checks)
//! * `kernel`    — reference CPU kernels (the oracle and eager path)
//! * `jvp`, `transpose`, `batch` — transformation rules (`rules` holds their
//!   signatures and the listing of arms still missing)
//!
//! Params convert to and from the generic [`Param`] tree in one place
//! ([`params`]), which the printers, the parser, the hash and the Python
//! binding all share.

pub mod batch;
pub mod jvp;
pub mod kernel;
pub mod params;
pub mod rules;
pub mod shape;
pub mod transpose;

use crate::dtype::DType;
use crate::ir::ClosedJaxpr;
use std::sync::Arc;

pub use params::Param;

/// Declares an op table: the enum, its JAX names, and the list of all ops.
macro_rules! op_table {
    ($(#[$m:meta])* $name:ident { $($var:ident => $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($var),* }
        impl $name {
            /// Every op of the table.
            pub const ALL: &'static [$name] = &[$($name::$var),*];
            /// The `jax.lax` primitive name.
            pub fn name(self) -> &'static str {
                match self { $($name::$var => $s),* }
            }
            pub fn from_name(s: &str) -> Option<$name> {
                match s { $($s => Some($name::$var),)* _ => None }
            }
        }
    };
}

op_table!(
    /// Elementwise ops of one operand that keep dtype and shape.
    UnaryOp {
        Neg => "neg", Exp => "exp", Log => "log", Sin => "sin", Cos => "cos",
        Tanh => "tanh", Logistic => "logistic", Sqrt => "sqrt", Abs => "abs", Sign => "sign",
    }
);

op_table!(
    /// Elementwise ops of two operands of one dtype.
    BinaryOp {
        Add => "add", Sub => "sub", Mul => "mul", Div => "div",
        Max => "max", Min => "min", Pow => "pow",
    }
);

op_table!(
    /// Elementwise comparisons, producing bool.
    CmpOp { Eq => "eq", Ne => "ne", Lt => "lt", Le => "le", Gt => "gt", Ge => "ge" }
);

op_table!(
    /// Reductions over a set of axes.
    ReduceOp { Sum => "reduce_sum", Max => "reduce_max" }
);

impl UnaryOp {
    /// Ops defined only on floating dtypes (transcendentals).
    pub fn float_only(self) -> bool {
        matches!(
            self,
            UnaryOp::Exp
                | UnaryOp::Log
                | UnaryOp::Sin
                | UnaryOp::Cos
                | UnaryOp::Tanh
                | UnaryOp::Logistic
                | UnaryOp::Sqrt
        )
    }
}

impl BinaryOp {
    /// Ops defined only on floating dtypes.
    pub fn float_only(self) -> bool {
        matches!(self, BinaryOp::Pow)
    }

    /// Ops that also accept bool operands.
    pub fn accepts_bool(self) -> bool {
        matches!(self, BinaryOp::Max | BinaryOp::Min)
    }
}

/// `dot_general` dimension numbers: `((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DotDims {
    pub lhs_contract: Vec<usize>,
    pub rhs_contract: Vec<usize>,
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
}

/// A primitive with its params. Names and params follow `jax.lax`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Primitive {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare(CmpOp),
    /// `x ** y` for a static integer `y`.
    IntegerPow {
        y: i32,
    },
    /// `select_n(pred, *cases)`: case `pred` of each element (bool pred picks
    /// `cases[1]` where true).
    SelectN,
    ConvertElementType {
        new_dtype: DType,
        weak_type: bool,
    },
    BroadcastInDim {
        shape: Vec<usize>,
        broadcast_dimensions: Vec<usize>,
    },
    Reshape {
        new_sizes: Vec<usize>,
    },
    Transpose {
        permutation: Vec<usize>,
    },
    Squeeze {
        dimensions: Vec<usize>,
    },
    Reduce {
        op: ReduceOp,
        axes: Vec<usize>,
    },
    DotGeneral {
        dims: DotDims,
        preferred_element_type: Option<DType>,
    },
    Iota {
        dtype: DType,
        shape: Vec<usize>,
        dimension: usize,
    },
    /// A call of a closed sub-jaxpr (nested `jit`).
    Pjit {
        jaxpr: Arc<ClosedJaxpr>,
        name: String,
    },
}

impl Primitive {
    /// The `jax.lax` name (`add`, `reduce_sum`, `pjit`).
    pub fn name(&self) -> &'static str {
        match self {
            Primitive::Unary(op) => op.name(),
            Primitive::Binary(op) => op.name(),
            Primitive::Compare(op) => op.name(),
            Primitive::IntegerPow { .. } => "integer_pow",
            Primitive::SelectN => "select_n",
            Primitive::ConvertElementType { .. } => "convert_element_type",
            Primitive::BroadcastInDim { .. } => "broadcast_in_dim",
            Primitive::Reshape { .. } => "reshape",
            Primitive::Transpose { .. } => "transpose",
            Primitive::Squeeze { .. } => "squeeze",
            Primitive::Reduce { op, .. } => op.name(),
            Primitive::DotGeneral { .. } => "dot_general",
            Primitive::Iota { .. } => "iota",
            Primitive::Pjit { .. } => "pjit",
        }
    }

    /// Whether `bind` returns a list (JAX's `multiple_results`).
    pub fn multiple_results(&self) -> bool {
        matches!(self, Primitive::Pjit { .. })
    }

    /// Every primitive name of the set, for Python's `*_p` objects and the
    /// coverage test.
    pub fn all_names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        names.extend(UnaryOp::ALL.iter().map(|o| o.name()));
        names.extend(BinaryOp::ALL.iter().map(|o| o.name()));
        names.extend(CmpOp::ALL.iter().map(|o| o.name()));
        names.extend(ReduceOp::ALL.iter().map(|o| o.name()));
        names.extend([
            "integer_pow",
            "select_n",
            "convert_element_type",
            "broadcast_in_dim",
            "reshape",
            "transpose",
            "squeeze",
            "dot_general",
            "iota",
            "pjit",
        ]);
        names
    }

    /// One representative instance per primitive (params arbitrary but
    /// valid), for rule-coverage listings.
    pub fn examples() -> Vec<Primitive> {
        let mut out: Vec<Primitive> = Vec::new();
        out.extend(UnaryOp::ALL.iter().map(|&o| Primitive::Unary(o)));
        out.extend(BinaryOp::ALL.iter().map(|&o| Primitive::Binary(o)));
        out.extend(CmpOp::ALL.iter().map(|&o| Primitive::Compare(o)));
        out.extend(
            ReduceOp::ALL
                .iter()
                .map(|&op| Primitive::Reduce { op, axes: vec![0] }),
        );
        out.extend([
            Primitive::IntegerPow { y: 2 },
            Primitive::SelectN,
            Primitive::ConvertElementType {
                new_dtype: DType::F32,
                weak_type: false,
            },
            Primitive::BroadcastInDim {
                shape: vec![1],
                broadcast_dimensions: vec![],
            },
            Primitive::Reshape { new_sizes: vec![1] },
            Primitive::Transpose {
                permutation: vec![0],
            },
            Primitive::Squeeze {
                dimensions: vec![0],
            },
            Primitive::DotGeneral {
                dims: DotDims::default(),
                preferred_element_type: None,
            },
            Primitive::Iota {
                dtype: DType::I32,
                shape: vec![1],
                dimension: 0,
            },
            Primitive::Pjit {
                jaxpr: Arc::new(ClosedJaxpr::new(crate::ir::Jaxpr::default(), Vec::new())),
                name: String::new(),
            },
        ]);
        out
    }
}

impl std::fmt::Display for Primitive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
