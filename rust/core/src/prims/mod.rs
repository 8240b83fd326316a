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

pub mod barrier;
pub mod batch;
pub mod bits;
pub mod call;
pub mod callback;
pub mod collective;
pub mod complex;
pub mod control;
pub mod conv;
pub mod convert;
pub mod custom;
pub mod dot;
pub mod dynamic;
pub mod elementwise;
pub mod family;
pub mod fft;
pub mod gather;
pub mod jvp;
pub mod kernel;
pub mod linalg;
pub mod numeric;
pub mod params;
pub mod process;
pub mod random;
pub mod reduce;
pub mod remat;
pub mod scatter;
pub mod select;
pub mod shape;
pub mod slicing;
pub mod sort;
pub mod special;
pub mod structural;
pub mod transpose;
pub mod window;

use crate::dtype::DType;

pub use call::{Checkpoint, Pjit};
pub use convert::{ConvertElementType, StopGradient};
pub use dot::DotGeneral;
pub use family::{Family, Operand};
pub use numeric::{IntegerPow, IsFinite, Round};
pub use params::Param;
pub use reduce::{ArgReduce, Cumulative, Reduce};
pub use remat::{CheckpointName, RematPolicy};
pub use select::{Clamp, SelectN};
pub use slicing::{DynamicSlice, DynamicUpdateSlice, Slice};
pub use structural::{BroadcastInDim, Concatenate, Iota, Pad, Reshape, Rev, Squeeze, Transpose};

/// Declares an op table: the enum, its JAX names, and the list of all ops.
macro_rules! op_table {
    ($(#[$m:meta])* $name:ident { $($var:ident => $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($var),* }
        impl $name {
            /// Every op of the table.
            pub const ALL: &'static [$name] = &[$($name::$var),*];
            /// The `jax.lax` name of every op of the table.
            pub const NAMES: &'static [&'static str] = &[$($s),*];
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
        Floor => "floor", Ceil => "ceil", Exp2 => "exp2", Log1p => "log1p", Expm1 => "expm1",
        Tan => "tan", Asin => "asin", Acos => "acos", Atan => "atan", Sinh => "sinh",
        Cosh => "cosh", Asinh => "asinh", Acosh => "acosh", Atanh => "atanh", Rsqrt => "rsqrt",
        Cbrt => "cbrt", Erf => "erf", ErfInv => "erf_inv", Lgamma => "lgamma",
        Digamma => "digamma", Square => "square",
        Not => "not", PopulationCount => "population_count", Clz => "clz",
    }
);

op_table!(
    /// Elementwise ops of two operands of one dtype.
    BinaryOp {
        Add => "add", Sub => "sub", Mul => "mul", Div => "div",
        Max => "max", Min => "min", Pow => "pow",
        Rem => "rem", Atan2 => "atan2", Nextafter => "nextafter", Polygamma => "polygamma",
        And => "and", Or => "or", Xor => "xor",
        ShiftLeft => "shift_left", ShiftRightLogical => "shift_right_logical",
        ShiftRightArithmetic => "shift_right_arithmetic",
    }
);

op_table!(
    /// Elementwise special functions of one to three floating operands
    /// (`prims/special.rs`).
    SpecialOp {
        Igamma => "igamma", Igammac => "igammac", IgammaGradA => "igamma_grad_a",
        RandomGammaGrad => "random_gamma_grad",
        RegularizedIncompleteBeta => "regularized_incomplete_beta", Zeta => "zeta",
        BesselI0e => "bessel_i0e", BesselI1e => "bessel_i1e", Erfc => "erfc",
    }
);

op_table!(
    /// Elementwise comparisons, producing bool.
    CmpOp { Eq => "eq", Ne => "ne", Lt => "lt", Le => "le", Gt => "gt", Ge => "ge" }
);

op_table!(
    /// Reductions over a set of axes.
    ReduceOp {
        Sum => "reduce_sum", Max => "reduce_max", Prod => "reduce_prod", Min => "reduce_min",
        And => "reduce_and", Or => "reduce_or", Xor => "reduce_xor",
    }
);

op_table!(
    /// Index of the extreme element along one axis.
    ArgOp { Argmax => "argmax", Argmin => "argmin" }
);

op_table!(
    /// Inclusive scans along one axis.
    CumOp {
        Sum => "cumsum", Prod => "cumprod", Max => "cummax", Min => "cummin",
        Logsumexp => "cumlogsumexp",
    }
);

/// Which operand dtypes an elementwise op takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DTypeClass {
    /// Floating dtypes only (transcendentals).
    Float,
    /// Integers and floats.
    Numeric,
    /// Integers, floats and bool.
    NumericOrBool,
    /// Integers and bool (bitwise ops).
    IntOrBool,
    /// Integers only.
    Int,
}

impl DTypeClass {
    pub fn accepts(self, d: DType) -> bool {
        match self {
            DTypeClass::Float => d.is_float(),
            DTypeClass::Numeric => d.is_numeric(),
            DTypeClass::NumericOrBool => d.is_numeric() || d == DType::Bool,
            DTypeClass::IntOrBool => d.is_int() || d == DType::Bool,
            DTypeClass::Int => d.is_int(),
        }
    }

    /// Words for an error message ("a floating", ...).
    pub fn describe(self) -> &'static str {
        match self {
            DTypeClass::Float => "a floating",
            DTypeClass::Numeric => "a numeric",
            DTypeClass::NumericOrBool => "a numeric or bool",
            DTypeClass::IntOrBool => "an integer or bool",
            DTypeClass::Int => "an integer",
        }
    }
}

impl UnaryOp {
    /// The operand dtypes the op takes.
    pub fn class(self) -> DTypeClass {
        match self {
            UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Square => DTypeClass::Numeric,
            UnaryOp::Not => DTypeClass::IntOrBool,
            UnaryOp::PopulationCount | UnaryOp::Clz => DTypeClass::Int,
            _ => DTypeClass::Float,
        }
    }
}

impl BinaryOp {
    /// The operand dtypes the op takes.
    pub fn class(self) -> DTypeClass {
        match self {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => {
                DTypeClass::Numeric
            }
            BinaryOp::Max | BinaryOp::Min => DTypeClass::NumericOrBool,
            BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Nextafter | BinaryOp::Polygamma => {
                DTypeClass::Float
            }
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => DTypeClass::IntOrBool,
            BinaryOp::ShiftLeft | BinaryOp::ShiftRightLogical | BinaryOp::ShiftRightArithmetic => {
                DTypeClass::Int
            }
        }
    }
}

impl UnaryOp {
    /// Whether JAX defines the op on complex operands (`abs` then has the
    /// parts' real dtype).
    pub fn takes_complex(self) -> bool {
        matches!(
            self,
            UnaryOp::Neg
                | UnaryOp::Abs
                | UnaryOp::Sign
                | UnaryOp::Square
                | UnaryOp::Exp
                | UnaryOp::Exp2
                | UnaryOp::Log
                | UnaryOp::Log1p
                | UnaryOp::Expm1
                | UnaryOp::Sin
                | UnaryOp::Cos
                | UnaryOp::Tan
                | UnaryOp::Tanh
                | UnaryOp::Sinh
                | UnaryOp::Cosh
                | UnaryOp::Asin
                | UnaryOp::Acos
                | UnaryOp::Atan
                | UnaryOp::Asinh
                | UnaryOp::Acosh
                | UnaryOp::Atanh
                | UnaryOp::Sqrt
                | UnaryOp::Rsqrt
                | UnaryOp::Logistic
        )
    }

    /// The result dtype for an operand of dtype `d`: `d`, but the parts'
    /// dtype for `abs` of a complex operand.
    pub fn out_dtype(self, d: DType) -> DType {
        if self == UnaryOp::Abs {
            d.real_dtype()
        } else {
            d
        }
    }
}

impl BinaryOp {
    /// Whether the op takes complex operands (`max`/`min` order complex
    /// numbers lexicographically, as JAX).
    pub fn takes_complex(self) -> bool {
        matches!(
            self,
            BinaryOp::Add
                | BinaryOp::Sub
                | BinaryOp::Mul
                | BinaryOp::Div
                | BinaryOp::Pow
                | BinaryOp::Max
                | BinaryOp::Min
        )
    }
}

/// `float_only` and `accepts` of the ops whose `class` names the operand
/// dtypes they take (complex operands as `takes_complex` says).
macro_rules! class_queries {
    ($($op:ty),*) => {$(
        impl $op {
            /// Ops defined only on floating dtypes (transcendentals).
            pub fn float_only(self) -> bool {
                self.class() == DTypeClass::Float
            }

            /// Whether the op takes operands of dtype `d`.
            pub fn accepts(self, d: DType) -> bool {
                self.class().accepts(d) || (d.is_complex() && self.takes_complex())
            }
        }
    )*};
}

class_queries!(UnaryOp, BinaryOp);

impl ReduceOp {
    /// The operand dtypes the reduction takes.
    pub fn class(self) -> DTypeClass {
        match self {
            ReduceOp::Sum | ReduceOp::Prod => DTypeClass::Numeric,
            ReduceOp::Max | ReduceOp::Min => DTypeClass::NumericOrBool,
            ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => DTypeClass::IntOrBool,
        }
    }
}

impl CumOp {
    /// The operand dtypes the scan takes.
    pub fn class(self) -> DTypeClass {
        match self {
            CumOp::Sum | CumOp::Prod => DTypeClass::Numeric,
            CumOp::Max | CumOp::Min => DTypeClass::NumericOrBool,
            CumOp::Logsumexp => DTypeClass::Float,
        }
    }
}

/// `round`'s `rounding_method` (JAX's `lax.RoundingMethod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoundingMethod {
    /// 0: halfway cases away from zero (the default of `lax.round`).
    AwayFromZero,
    /// 1: halfway cases to the nearest even integer.
    ToNearestEven,
}

/// `dot_general` dimension numbers: `((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DotDims {
    pub lhs_contract: Vec<usize>,
    pub rhs_contract: Vec<usize>,
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
}

/// Declares [`Primitive`] from one list and generates its dispatch.
///
/// Every variant holds a [`family::Family`] (boxed when large): its name,
/// params, display, effect and every rule dispatch to the family's impl, so
/// adding a primitive is one line here plus the family's file.
macro_rules! primitives {
    ($($(#[$fm:meta])* $F:ident($FT:ty),)*) => {
        /// A primitive with its params. Names and params follow `jax.lax`.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum Primitive {
            $($(#[$fm])* $F($FT),)*
        }

        $(
            impl From<$FT> for Primitive {
                fn from(f: $FT) -> Primitive {
                    Primitive::$F(f)
                }
            }
        )*

        impl Primitive {
            /// The `jax.lax` name (`add`, `reduce_sum`, `pjit`).
            pub fn name(&self) -> &'static str {
                match self {
                    $(Primitive::$F(f) => family::Family::name(f),)*
                }
            }

            /// Whether `bind` returns a list (JAX's `multiple_results`).
            pub fn multiple_results(&self) -> bool {
                match self {
                    $(Primitive::$F(f) => family::Family::multiple_results(f),)*
                }
            }

            /// Whether an output can carry a nonzero tangent
            /// ([`family::Family::differentiable`]).
            pub fn differentiable(&self) -> bool {
                match self {
                    $(Primitive::$F(f) => family::Family::differentiable(f),)*
                }
            }

            /// The effect an equation of this primitive has (a sub-jaxpr's
            /// effects lift to its caller).
            pub fn effect(&self) -> crate::ir::Effect {
                match self {
                    $(Primitive::$F(f) => family::Family::effect(f),)*
                }
            }

            /// The params JAX shows for this primitive, in JAX's order.
            pub fn params(&self) -> params::ParamList {
                match self {
                    $(Primitive::$F(f) => family::Family::params(f),)*
                }
            }

            /// The params as the human-readable printer shows them.
            pub fn display_params(&self) -> params::ParamList {
                let mut params = self.params();
                match self {
                    $(Primitive::$F(f) => family::Family::display_params(f, &mut params),)*
                }
                params
            }

            /// Rebuilds a primitive from its name and params (what
            /// `bind(**params)` and the parser provide). Unknown names and
            /// ill-typed params are errors; params JAX has but we ignore
            /// (`precision`, `sharding`, ...) may be given.
            pub fn from_params(name: &str, params: &[(String, Param)]) -> crate::error::Result<Primitive> {
                let lookup = params::Lookup::new(name, params);
                $(
                    if let Some(f) = <$FT as family::Family>::from_params(name, &lookup)? {
                        return Ok(Primitive::$F(f));
                    }
                )*
                Err(crate::error::Error::UnknownPrimitive(name.to_string()))
            }

            /// Every primitive name of the set, for Python's `*_p` objects
            /// and the coverage test.
            pub fn all_names() -> Vec<&'static str> {
                let mut names: Vec<&'static str> = Vec::new();
                $(names.extend_from_slice(<$FT as family::Family>::NAMES);)*
                names
            }

            /// One representative instance per primitive (params arbitrary
            /// but valid), for rule-coverage listings.
            pub fn examples() -> Vec<Primitive> {
                let mut out: Vec<Primitive> = Vec::new();
                $(out.extend(<$FT as family::Family>::examples().into_iter().map(Primitive::$F));)*
                out
            }

            /// Output avals of this primitive applied to operands of avals
            /// `ins` (its shape rule).
            pub fn abstract_eval(&self, ins: &[crate::ir::Aval]) -> crate::error::Result<Vec<crate::ir::Aval>> {
                match self {
                    $(Primitive::$F(f) => family::Family::abstract_eval(f, ins),)*
                }
            }

            /// The JVP rule.
            pub fn jvp(
                &self,
                b: &mut crate::ir::builder::Builder,
                primals: &[crate::ir::Atom],
                tangents: &[Option<crate::ir::Atom>],
            ) -> family::JvpOut {
                match self {
                    $(Primitive::$F(f) => family::Family::jvp(f, b, primals, tangents),)*
                }
            }

            /// The transpose rule.
            pub fn transpose(
                &self,
                b: &mut crate::ir::builder::Builder,
                cts: &[Option<crate::ir::Atom>],
                operands: &[family::Operand],
            ) -> family::TransposeOut {
                match self {
                    $(Primitive::$F(f) => family::Family::transpose(f, b, cts, operands),)*
                }
            }

            /// The batch rule.
            pub fn batch(
                &self,
                b: &mut crate::ir::builder::Builder,
                operands: &[crate::ir::Atom],
                dims: &[Option<usize>],
                size: usize,
            ) -> family::BatchOut {
                match self {
                    $(Primitive::$F(f) => family::Family::batch(f, b, operands, dims, size),)*
                }
            }

            /// The CPU kernel, given the output avals of the shape rule
            /// (callers go through `kernel::eval`/`eval_known`, which check
            /// the results against them).
            pub(crate) fn kernel(
                &self,
                ctx: &crate::exec::ExecCtx,
                args: &[&crate::array::HostArray],
                outs: Vec<crate::ir::Aval>,
            ) -> crate::error::Result<Vec<crate::array::HostArray>> {
                match self {
                    $(Primitive::$F(f) => family::Family::kernel(f, ctx, args, outs),)*
                }
            }

            /// [`family::Family::kernel_one`] of this primitive's family.
            pub(crate) fn kernel_one(
                &self,
                ctx: &crate::exec::ExecCtx,
                args: &[&crate::array::HostArray],
                out: crate::ir::Aval,
            ) -> crate::error::Result<crate::array::HostArray> {
                match self {
                    $(Primitive::$F(f) => family::Family::kernel_one(f, ctx, args, out),)*
                }
            }
        }
    };
}

primitives! {
    /// Elementwise ops of one operand (`prims/elementwise.rs`).
    Unary(UnaryOp),
    /// Elementwise ops of two operands (`prims/elementwise.rs`).
    Binary(BinaryOp),
    /// Elementwise comparisons (`prims/elementwise.rs`).
    Compare(CmpOp),
    /// `igamma`, `zeta`, `bessel_i0e`, `erfc`, ... (`prims/special.rs`).
    Special(SpecialOp),
    /// `integer_pow` (`prims/numeric.rs`).
    IntegerPow(numeric::IntegerPow),
    /// `is_finite` (`prims/numeric.rs`).
    IsFinite(numeric::IsFinite),
    /// `round` (`prims/numeric.rs`).
    Round(numeric::Round),
    /// `real` (`prims/complex.rs`).
    Real(complex::Real),
    /// `imag` (`prims/complex.rs`).
    Imag(complex::Imag),
    /// `conj` (`prims/complex.rs`).
    Conj(complex::Conj),
    /// `complex` (`prims/complex.rs`).
    MakeComplex(complex::MakeComplex),
    /// `mulhi` (`prims/bits.rs`).
    Mulhi(bits::Mulhi),
    /// `reduce_precision` (`prims/bits.rs`).
    ReducePrecision(bits::ReducePrecision),
    /// `optimization_barrier` (`prims/barrier.rs`): one output per operand.
    OptimizationBarrier(barrier::OptimizationBarrier),
    /// `select_n` (`prims/select.rs`).
    SelectN(select::SelectN),
    /// `clamp` (`prims/select.rs`).
    Clamp(select::Clamp),
    /// `convert_element_type` (`prims/convert.rs`).
    ConvertElementType(convert::ConvertElementType),
    /// `stop_gradient` (`prims/convert.rs`).
    StopGradient(convert::StopGradient),
    /// `broadcast_in_dim` (`prims/structural/`).
    BroadcastInDim(structural::BroadcastInDim),
    /// `reshape` (`prims/structural/`).
    Reshape(structural::Reshape),
    /// `transpose` (`prims/structural/`).
    Transpose(structural::Transpose),
    /// `squeeze` (`prims/structural/`).
    Squeeze(structural::Squeeze),
    /// `iota` (`prims/structural/`).
    Iota(structural::Iota),
    /// `rev` (`prims/structural/`).
    Rev(structural::Rev),
    /// `concatenate` (`prims/structural/`).
    Concatenate(structural::Concatenate),
    /// `pad` (`prims/structural/`).
    Pad(structural::Pad),
    /// `slice` (`prims/slicing.rs`).
    Slice(slicing::Slice),
    /// `dynamic_slice` (`prims/slicing.rs`).
    DynamicSlice(slicing::DynamicSlice),
    /// `dynamic_update_slice` (`prims/slicing.rs`).
    DynamicUpdateSlice(slicing::DynamicUpdateSlice),
    /// `reduce_sum`, `reduce_max`, ... (`prims/reduce.rs`).
    Reduce(reduce::Reduce),
    /// `argmax`, `argmin` (`prims/reduce.rs`).
    Arg(reduce::ArgReduce),
    /// `cumsum`, `cumprod`, ... (`prims/reduce.rs`).
    Cumulative(reduce::Cumulative),
    /// `dot_general` (`prims/dot.rs`).
    DotGeneral(dot::DotGeneral),
    /// `pjit`, a nested `jit` (`prims/call.rs`).
    Pjit(call::Pjit),
    /// `checkpoint` (`prims/call.rs`).
    Checkpoint(call::Checkpoint),
    /// `name`, the value marker of `checkpoint_name` (`prims/remat.rs`).
    Name(remat::CheckpointName),
    /// `reduce_window_{sum,max,min}`, `select_and_{gather,scatter}_add` (`prims/window.rs`).
    Window(Box<window::WindowOp>),
    /// `cholesky`, `triangular_solve`, `lu`, `qr`, `eigh`, `svd` (`prims/linalg/`).
    Linalg(linalg::LinalgOp),
    /// `fft` (`prims/fft/`).
    Fft(fft::FftParams),
    /// `sort`, `top_k`, `bitcast_convert_type` (`prims/sort.rs`).
    Sort(sort::SortOp),
    /// Named-axis collectives (`psum`, `all_gather`, `axis_index`, ...) (`prims/collective.rs`).
    Collective(collective::Collective),
    /// `gather` (`prims/gather.rs`).
    Gather(Box<gather::GatherParams>),
    /// `scatter`, `scatter-add`, `scatter-mul`, `scatter-min`, `scatter-max` (`prims/scatter.rs`).
    Scatter(Box<gather::ScatterParams>),
    /// `conv_general_dilated` (`prims/conv/`).
    Conv(Box<conv::ConvParams>),
    /// Custom derivatives (`custom_jvp_call`, `custom_vjp_call`, `custom_lin`, `linear_call`)
    /// (`prims/custom.rs`).
    Custom(custom::CustomCall),
    /// Control flow (`cond`, `while`, `scan`) (`prims/control/`).
    Control(control::ControlFlow),
    /// Host callbacks (`pure_callback`, `io_callback`, `debug_callback`) (`prims/callback.rs`).
    Callback(callback::Callback),
    /// Collectives between processes through MPI (`process_allreduce`,
    /// `process_allgather`, `process_broadcast`) (`prims/process.rs`).
    Process(process::ProcessCollective),
    /// The Threefry-2x32 hash (`prims/random.rs`): two outputs.
    Threefry2x32(random::Threefry2x32),
    /// Primitives whose rules a provider gives at run time (`prims/dynamic.rs`).
    Dynamic(dynamic::DynamicPrim),
}

impl std::fmt::Display for Primitive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
