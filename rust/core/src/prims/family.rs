//! The one trait a primitive family implements.
//!
//! A family is a params type (an op table such as [`super::window::WindowOp`]
//! or a params struct such as [`super::gather::GatherParams`]) that knows
//! everything about its primitives, in the family's own file: names, params
//! to and from the generic `Param` tree, display, the shape rule, the CPU
//! kernel and the three transformation rules. Every rule is required, so a
//! family without a rule does not compile; the one provided method,
//! [`Family::differentiable`], is overridden by the families whose JVP
//! rule never gives a tangent. Rules receive the family's own
//! params (`&self`), never the whole [`Primitive`]: there is nothing to
//! re-match and no "wrong rule" case.
//!
//! The [`Primitive`] enum and its dispatch are generated from one list
//! (`primitives!` in `prims/mod.rs`); a boxed family (`Box<GatherParams>`,
//! kept small in the enum) forwards through the blanket impl below.

use super::params::{Lookup, ParamList};
use super::Primitive;
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Effect};

/// What a JVP rule returns: primal outputs and their tangents (`None`: a
/// symbolic zero).
pub type JvpOut = Result<(Vec<Atom>, Vec<Option<Atom>>)>;

/// What a transpose rule returns: one entry per operand, the cotangent of a
/// linear operand (`None`: zero) or `None` for a known operand.
pub type TransposeOut = Result<Vec<Option<Atom>>>;

/// What a batch rule returns: outputs and their batch dims (`None`:
/// unbatched).
pub type BatchOut = Result<(Vec<Atom>, Vec<Option<usize>>)>;

/// An operand of an equation being transposed: a known (non-linear) value,
/// or a linear one of which only the type is known.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Known(Atom),
    Linear(Aval),
}

impl Operand {
    pub fn is_linear(&self) -> bool {
        matches!(self, Operand::Linear(_))
    }
}

/// The atoms of the known (non-linear) operands, in order.
pub fn known_atoms(ops: &[Operand]) -> Vec<Atom> {
    ops.iter()
        .filter_map(|o| match o {
            Operand::Known(a) => Some(a.clone()),
            Operand::Linear(_) => None,
        })
        .collect()
}

/// A primitive family: its params and every rule of its primitives.
pub trait Family: Sized {
    /// The `jax.lax` name of every primitive of the family.
    const NAMES: &'static [&'static str];

    /// The name of this primitive.
    fn name(&self) -> &'static str;

    /// Whether `bind` returns a list (JAX's `multiple_results`).
    fn multiple_results(&self) -> bool;

    /// The effect an equation of this primitive has.
    fn effect(&self) -> Effect;

    /// The params JAX shows, in JAX's order.
    fn params(&self) -> ParamList;

    /// Rebuilds a primitive of this family from its name and params; `None`
    /// for a name of another family.
    fn from_params(name: &str, params: &Lookup<'_>) -> Result<Option<Self>>;

    /// Adjusts the params for the human-readable printer (JAX prints some
    /// params in a form other than their value, e.g. dimension numbers).
    fn display_params(&self, params: &mut ParamList);

    /// One representative instance per primitive (params arbitrary but
    /// valid), for coverage listings.
    fn examples() -> Vec<Self>;

    /// Shape rule: output avals for operands of avals `ins`, rejecting bad
    /// operands with an error naming the primitive.
    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>>;

    /// Reference CPU kernel. `outs` are the avals the shape rule gave (the
    /// caller checks the results against them); `ctx` is the run's
    /// execution context (pass it on to nested evaluations).
    fn kernel(&self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>)
        -> Result<Vec<HostArray>>;

    /// [`Family::kernel`] of a single-output primitive, given its one
    /// output aval and returning its one result: the eager hot path, where
    /// the two vectors would cost more than a small kernel. The provided
    /// version goes through `kernel`; the elementwise families, whose
    /// kernels are that small, implement it and build `kernel` on it.
    fn kernel_one(&self, ctx: &ExecCtx, args: &[&HostArray], out: Aval) -> Result<HostArray> {
        let name = self.name();
        let outs = self.kernel(ctx, args, vec![out])?;
        let n = outs.len();
        let mut it = outs.into_iter();
        match (it.next(), it.next()) {
            (Some(o), None) => Ok(o),
            _ => Err(arity_error(name, 1, n)),
        }
    }

    /// Whether an output of this primitive can carry a nonzero tangent.
    /// False when the JVP rule gives symbolic zeros whatever the operands
    /// (bool or integer results, `stop_gradient`): tracing AD may then run
    /// the primitive on known values instead of recording it. Decided by
    /// the primitive alone, never its params (`convert_element_type` to an
    /// integer dtype is differentiable here, its tangent is still zero).
    fn differentiable(&self) -> bool {
        true
    }

    /// JVP rule: emit primal and tangent outputs for primal operands and
    /// their tangents (`None`: symbolic zero).
    fn jvp(&self, b: &mut Builder, primals: &[Atom], tangents: &[Option<Atom>]) -> JvpOut;

    /// Transpose rule: given output cotangents (`None`: zero; at least one
    /// present) and the operands, the cotangent of each linear operand.
    fn transpose(
        &self, b: &mut Builder, cts: &[Option<Atom>], operands: &[Operand],
    ) -> TransposeOut;

    /// Batch rule: emit the batched equation(s) for operands with batch dims
    /// `dims` (`None`: unbatched) of mapped size `size`.
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], size: usize,
    ) -> BatchOut;
}

/// A boxed family is the family (the enum boxes large params).
impl<F: Family> Family for Box<F> {
    const NAMES: &'static [&'static str] = F::NAMES;
    fn name(&self) -> &'static str {
        F::name(self)
    }
    fn multiple_results(&self) -> bool {
        F::multiple_results(self)
    }
    fn effect(&self) -> Effect {
        F::effect(self)
    }
    fn params(&self) -> ParamList {
        F::params(self)
    }
    fn from_params(name: &str, params: &Lookup<'_>) -> Result<Option<Self>> {
        Ok(F::from_params(name, params)?.map(Box::new))
    }
    fn display_params(&self, params: &mut ParamList) {
        F::display_params(self, params)
    }
    fn examples() -> Vec<Self> {
        F::examples().into_iter().map(Box::new).collect()
    }
    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        F::abstract_eval(self, ins)
    }
    fn kernel(
        &self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        F::kernel(self, ctx, args, outs)
    }
    fn kernel_one(&self, ctx: &ExecCtx, args: &[&HostArray], out: Aval) -> Result<HostArray> {
        F::kernel_one(self, ctx, args, out)
    }
    fn differentiable(&self) -> bool {
        F::differentiable(self)
    }
    fn jvp(&self, b: &mut Builder, primals: &[Atom], tangents: &[Option<Atom>]) -> JvpOut {
        F::jvp(self, b, primals, tangents)
    }
    fn transpose(
        &self, b: &mut Builder, cts: &[Option<Atom>], operands: &[Operand],
    ) -> TransposeOut {
        F::transpose(self, b, cts, operands)
    }
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], size: usize,
    ) -> BatchOut {
        F::batch(self, b, operands, dims, size)
    }
}

// ------------------------------------------------------------ shared helpers
// The `deflinear`/`defbroadcasting` equivalents families build their rules
// from.

/// `Error::Arity` for primitive `prim`.
pub fn arity_error(prim: &'static str, expected: usize, got: usize) -> Error {
    Error::Arity {
        prim,
        expected,
        got,
    }
}

/// Checks `got` against `want` type by type: `count` builds the message when
/// the lengths differ, `mismatch(k, want_k, got_k)` the one for the first
/// position whose types differ.
pub fn check_types(
    want: &[Aval], got: &[Aval], count: impl FnOnce() -> String,
    mismatch: impl FnOnce(usize, &Aval, &Aval) -> String,
) -> Result<()> {
    if want.len() != got.len() {
        return Err(Error::Typecheck(count()));
    }
    match want
        .iter()
        .zip(got)
        .enumerate()
        .find(|(_, (w, g))| !w.same_type(g))
    {
        Some((k, (w, g))) => Err(Error::Typecheck(mismatch(k, w, g))),
        None => Ok(()),
    }
}

/// Operands of a callee's parameter types: `Error::Arity` when the counts
/// differ, `Error::Typecheck` naming the first operand that does not match.
pub fn check_param_types(prim: &'static str, want: &[Aval], ins: &[Aval]) -> Result<()> {
    if want.len() != ins.len() {
        return Err(arity_error(prim, want.len(), ins.len()));
    }
    check_types(want, ins, String::new, |_, w, g| {
        format!(
            "{prim}: operand {} does not match parameter {}",
            g.short(),
            w.short()
        )
    })
}

/// The operands as a fixed-size array, or `Error::Arity`.
pub fn operands<'a, T, const N: usize>(prim: &'static str, xs: &'a [T]) -> Result<&'a [T; N]> {
    xs.try_into().map_err(|_| arity_error(prim, N, xs.len()))
}

/// The single output of a kernel whose shape rule gave one aval.
pub fn single_out(prim: &'static str, outs: Vec<Aval>) -> Result<Aval> {
    let n = outs.len();
    let mut it = outs.into_iter();
    match (it.next(), it.next()) {
        (Some(a), None) => Ok(a),
        _ => Err(arity_error(prim, 1, n)),
    }
}

/// The kernel's buffer as the single array the shape rule promised.
pub fn finish(
    prim: &'static str, outs: Vec<Aval>, buf: crate::array::Buffer,
) -> Result<Vec<HostArray>> {
    let out = single_out(prim, outs)?;
    Ok(vec![HostArray::new(out.shape, buf)?])
}

/// The kernel of a one-operand, one-output primitive: the buffer `f` makes
/// of the operand, under the output's shape.
pub fn unary_kernel(
    prim: &'static str, args: &[&HostArray], outs: Vec<Aval>,
    f: impl FnOnce(&HostArray) -> Result<crate::array::Buffer>,
) -> Result<Vec<HostArray>> {
    let [x] = operands::<_, 1>(prim, args)?;
    finish(prim, outs, f(x)?)
}

/// The kernel of a primitive that keeps its one operand's data: the
/// operand's buffer as is, under the output's shape.
pub fn same_data(
    prim: &'static str, args: &[&HostArray], outs: Vec<Aval>,
) -> Result<Vec<HostArray>> {
    unary_kernel(prim, args, outs, |x| x.buffer().try_clone(prim))
}

/// The kernel's buffers as the arrays the shape rule promised, one per
/// output aval.
pub fn finish_all(
    prim: &'static str, outs: Vec<Aval>, bufs: Vec<crate::array::Buffer>,
) -> Result<Vec<HostArray>> {
    Error::check_count(prim, outs.len(), bufs.len())?;
    bufs.into_iter()
        .zip(outs)
        .map(|(buf, aval)| HostArray::new(aval.shape, buf))
        .collect()
}

/// Emits one equation of `family` and returns its single output.
pub fn emit1<F: Family>(b: &mut Builder, family: F, ins: Vec<Atom>) -> Result<Atom>
where
    Primitive: From<F>,
{
    b.add_eqn1(Primitive::from(family), ins)
}

/// Emits one equation of `family` and returns its outputs.
pub fn emit<F: Family>(b: &mut Builder, family: F, ins: Vec<Atom>) -> Result<Vec<Atom>>
where
    Primitive: From<F>,
{
    let outs = b.add_eqn(Primitive::from(family), ins, None)?;
    Ok(outs.into_iter().map(Atom::Var).collect())
}

/// JVP of a primitive with a zero derivative (integer results, indices,
/// piecewise-constant functions): the primal outputs with zero tangents.
pub fn jvp_zero<F: Family + Clone>(
    family: &F, b: &mut Builder, primals: &[Atom], _tangents: &[Option<Atom>],
) -> JvpOut
where
    Primitive: From<F>,
{
    let outs = emit(b, family.clone(), primals.to_vec())?;
    let zeros = vec![None; outs.len()];
    Ok((outs, zeros))
}

/// Transpose rule of a primitive that is never linear in any operand.
pub fn transpose_not_linear(prim: &'static str) -> TransposeOut {
    Err(super::transpose::not_linear_error(prim, ""))
}

/// No effect: the default of `family_identity!`'s `effect = ...`.
pub fn no_effect<F>(_family: &F) -> Effect {
    Effect::None
}

/// One output: the default of `family_identity!`'s `multiple_results`.
pub fn one_output<F>(_family: &F) -> bool {
    false
}

/// A list of outputs: `family_identity!`'s `multiple_results = true`.
pub fn many_outputs<F>(_family: &F) -> bool {
    true
}

/// The identity methods of a family (`NAMES`, `name`, `multiple_results`,
/// `effect`, `params`, `from_params`, `display_params`), written inside its
/// `impl Family`. The forms, by where the name comes from:
///
/// * `family_identity!("reshape")`: one name, params from a
///   [`declare_params!`](crate::declare_params) struct (`to_params`/`read`);
/// * `family_identity!(op: ReduceOp)`: the names of the struct's
///   `@name op: ReduceOp` field (`Op::NAMES`, `Op::from_name`, `op.name()`);
/// * `family_identity!(unit: "select_n")`: one name, a unit struct with no
///   params (its one example, so `examples` is written too);
/// * `family_identity!(table: UnaryOp)`: the family is the op table itself
///   (no params; every op an example, so `examples` is written too);
/// * `family_identity!(custom_params)`: only `multiple_results` and
///   `effect`, for a family that writes its names and params by hand.
///
/// Optional trailing arguments override the defaults of one output and no
/// effect: `multiple_results = true` or `multiple_results = path` (a
/// function of `&Self` giving a bool), `effect = path` (a function of
/// `&Self` giving the [`Effect`]); `example = expr` writes `examples` for a
/// family with one primitive (`expr`, its one example).
#[macro_export]
macro_rules! family_identity {
    (@opts [$m:path] [$e:path] [$($x:expr)?] multiple_results = true $(, $($rest:tt)*)?) => {
        $crate::family_identity!(
            @opts [$crate::prims::family::many_outputs] [$e] [$($x)?] $($($rest)*)?
        );
    };
    (@opts [$m:path] [$e:path] [$($x:expr)?] multiple_results = $v:path $(, $($rest:tt)*)?) => {
        $crate::family_identity!(@opts [$v] [$e] [$($x)?] $($($rest)*)?);
    };
    (@opts [$m:path] [$e:path] [$($x:expr)?] effect = $v:path $(, $($rest:tt)*)?) => {
        $crate::family_identity!(@opts [$m] [$v] [$($x)?] $($($rest)*)?);
    };
    (@opts [$m:path] [$e:path] [$($x:expr)?] example = $v:expr $(, $($rest:tt)*)?) => {
        $crate::family_identity!(@opts [$m] [$e] [$v] $($($rest)*)?);
    };
    (@opts [$m:path] [$e:path] [$($x:expr)?]) => {
        fn multiple_results(&self) -> bool {
            $m(self)
        }
        fn effect(&self) -> $crate::ir::Effect {
            $e(self)
        }
        $(
            fn examples() -> Vec<Self> {
                vec![$x]
            }
        )?
    };
    (@defaults $($opt:tt)*) => {
        $crate::family_identity!(
            @opts [$crate::prims::family::one_output] [$crate::prims::family::no_effect] []
            $($opt)*
        );
    };
    (@no_display) => {
        fn display_params(&self, _params: &mut $crate::prims::params::ParamList) {}
    };
    (@read $n:ident if $skip:expr) => {
        fn params(&self) -> $crate::prims::params::ParamList {
            self.to_params()
        }
        fn from_params(
            $n: &str, params: &$crate::prims::params::Lookup<'_>,
        ) -> $crate::error::Result<Option<Self>> {
            if $skip {
                return Ok(None);
            }
            Self::read(params).map(Some)
        }
    };
    (custom_params $(, $($opt:tt)*)?) => {
        $crate::family_identity!(@defaults $($($opt)*)?);
    };
    (op: $op:ident $(, $($opt:tt)*)?) => {
        const NAMES: &'static [&'static str] = $op::NAMES;
        fn name(&self) -> &'static str {
            self.op.name()
        }
        $crate::family_identity!(@read name if $op::from_name(name).is_none());
        $crate::family_identity!(@defaults $($($opt)*)?);
        $crate::family_identity!(@no_display);
    };
    (unit: $name:tt $(, $($opt:tt)*)?) => {
        const NAMES: &'static [&'static str] = &[$name];
        fn name(&self) -> &'static str {
            $name
        }
        fn params(&self) -> $crate::prims::params::ParamList {
            Vec::new()
        }
        fn from_params(
            name: &str, _params: &$crate::prims::params::Lookup<'_>,
        ) -> $crate::error::Result<Option<Self>> {
            Ok((name == $name).then_some(Self))
        }
        $crate::family_identity!(@defaults example = Self $(, $($opt)*)?);
        $crate::family_identity!(@no_display);
    };
    (table: $t:ident) => {
        const NAMES: &'static [&'static str] = $t::NAMES;
        fn name(&self) -> &'static str {
            $t::name(*self)
        }
        fn params(&self) -> $crate::prims::params::ParamList {
            Vec::new()
        }
        fn from_params(
            name: &str, _params: &$crate::prims::params::Lookup<'_>,
        ) -> $crate::error::Result<Option<$t>> {
            Ok($t::from_name(name))
        }
        fn examples() -> Vec<$t> {
            $t::ALL.to_vec()
        }
        $crate::family_identity!(@defaults);
        $crate::family_identity!(@no_display);
    };
    ($name:tt $(, $($opt:tt)*)?) => {
        const NAMES: &'static [&'static str] = &[$name];
        fn name(&self) -> &'static str {
            $name
        }
        $crate::family_identity!(@read name if name != $name);
        $crate::family_identity!(@defaults $($($opt)*)?);
        $crate::family_identity!(@no_display);
    };
}

/// The JVP rule `$rule(self, b, primals, tangents)`, written inside an
/// `impl Family`: `jvp_linear` for a family linear in its operands (the
/// primitive applied to the tangents too), [`jvp_zero`] for one with zero
/// tangents.
///
/// [`jvp_zero`]: crate::prims::family::jvp_zero
#[macro_export]
macro_rules! jvp_by {
    ($rule:path) => {
        fn jvp(
            &self, b: &mut $crate::ir::builder::Builder, primals: &[$crate::ir::Atom],
            tangents: &[Option<$crate::ir::Atom>],
        ) -> $crate::prims::family::JvpOut {
            $rule(self, b, primals, tangents)
        }
    };
}

/// `kernel` of a single-output family built on its `kernel_one`, written
/// inside its `impl Family`.
#[macro_export]
macro_rules! kernel_through_one {
    () => {
        fn kernel(
            &self, ctx: &$crate::exec::ExecCtx, args: &[&$crate::array::HostArray],
            outs: Vec<$crate::ir::Aval>,
        ) -> $crate::error::Result<Vec<$crate::array::HostArray>> {
            let out = $crate::prims::family::single_out(self.name(), outs)?;
            Ok(vec![self.kernel_one(ctx, args, out)?])
        }
    };
}

/// The shape rule and kernel of an identity primitive named `$name` (one
/// operand, returned as is), written inside its `impl Family`.
#[macro_export]
macro_rules! identity_rules {
    ($name:expr) => {
        fn abstract_eval(
            &self, ins: &[$crate::ir::Aval],
        ) -> $crate::error::Result<Vec<$crate::ir::Aval>> {
            let [x] = $crate::prims::family::operands::<_, 1>($name, ins)?;
            Ok(vec![x.clone()])
        }

        fn kernel(
            &self, _ctx: &$crate::exec::ExecCtx, args: &[&$crate::array::HostArray],
            outs: Vec<$crate::ir::Aval>,
        ) -> $crate::error::Result<Vec<$crate::array::HostArray>> {
            $crate::prims::family::same_data($name, args, outs)
        }
    };
}

/// `NAMES` and `name` of a family whose every variant is one primitive,
/// written inside its `impl Family` as `Pattern => "name"` pairs.
#[macro_export]
macro_rules! family_names {
    ($($variant:pat => $name:literal),+ $(,)?) => {
        const NAMES: &'static [&'static str] = &[$($name),+];

        fn name(&self) -> &'static str {
            match self {
                $($variant => $name),+
            }
        }
    };
}

/// The JVP and transpose rules of a family with a zero derivative that is
/// linear in no operand ([`jvp_zero`], [`transpose_not_linear`]), written
/// inside its `impl Family`.
///
/// With `not_differentiable`, also `differentiable` false (no output ever
/// carries a tangent).
#[macro_export]
macro_rules! zero_derivative_rules {
    (not_differentiable) => {
        fn differentiable(&self) -> bool {
            false
        }

        $crate::zero_derivative_rules!();
    };
    () => {
        $crate::jvp_by!($crate::prims::family::jvp_zero);

        fn transpose(
            &self, _b: &mut $crate::ir::builder::Builder, _cts: &[Option<$crate::ir::Atom>],
            _ops: &[$crate::prims::family::Operand],
        ) -> $crate::prims::family::TransposeOut {
            $crate::prims::family::transpose_not_linear(self.name())
        }
    };
}
