//! Elementwise fusion: which equations run together in one pass.
//!
//! A group is a set of elementwise equations (unary, binary, comparisons,
//! `integer_pow`, `select_n`, converts, `clamp`, `is_finite`, `round`) and
//! broadcasts of outside values, all producing the same shape. Its members
//! run at the position of its last member, chunk by chunk, so the
//! intermediate values never leave the cache.
//!
//! Equations are visited in program order. A fusable equation joins the
//! open groups of its shape that produce its operands (merging them), or
//! starts a group. A group *closes* as soon as an equation outside it reads
//! one of its values: that reader runs before the group's later members
//! would, so nothing may join afterwards. Moving pure members later past
//! other equations never changes what the program computes, and effectful
//! equations are never members.

use crate::dtype::DType;
use crate::error::Result;
use crate::ir::{Atom, Aval, Eqn, Jaxpr};
use crate::prims::Primitive;

/// How an outside value is read by the group, per element of the group's
/// shape: element `i` reads operand element `(i / inner) % size`.
///
/// This covers a full-shape operand (`inner = 1, size = n`), a scalar
/// (`size = 1`) and every broadcast whose kept axes are one contiguous run
/// of output axes (a bias row, a column, a scalar).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub inner: usize,
    pub size: usize,
}

/// Equations fused into one pass (indices into the program's equations,
/// in program order).
#[derive(Debug, Clone)]
pub struct Group {
    pub shape: Vec<usize>,
    pub members: Vec<usize>,
}

/// The shape an equation contributes to a group, when it can be fused.
fn fusable_shape(jx: &Jaxpr, eqn: &Eqn) -> Option<Vec<usize>> {
    let [out] = eqn.outputs.as_slice() else {
        return None;
    };
    let aval = jx.aval(*out).ok()?;
    if !plain_dtype(aval.dtype) {
        return None;
    }
    let elementwise = matches!(
        eqn.prim,
        Primitive::Unary(_)
            | Primitive::Binary(_)
            | Primitive::Compare(_)
            | Primitive::IntegerPow { .. }
            | Primitive::SelectN
            | Primitive::ConvertElementType { .. }
            | Primitive::Clamp
            | Primitive::IsFinite
            | Primitive::Round { .. }
    );
    let ok = if elementwise {
        eqn.inputs.iter().all(|a| match operand_aval(jx, a) {
            Some(x) => plain_dtype(x.dtype) && (x.shape == aval.shape || x.shape.is_empty()),
            None => false,
        })
    } else if let Primitive::BroadcastInDim {
        shape,
        broadcast_dimensions,
    } = &eqn.prim
    {
        match eqn.inputs.as_slice() {
            // A broadcast literal stays a kernel (the group reads outside
            // values through variables).
            [a @ Atom::Var(_)] => operand_aval(jx, a).is_some_and(|x| {
                plain_dtype(x.dtype)
                    && broadcast_access(&x.shape, shape, broadcast_dimensions).is_some()
            }),
            _ => false,
        }
    } else {
        false
    };
    ok.then(|| aval.shape.clone())
}

fn operand_aval<'a>(jx: &'a Jaxpr, a: &'a Atom) -> Option<&'a Aval> {
    match a {
        Atom::Var(v) => jx.aval(*v).ok(),
        Atom::Lit(l) => Some(&l.aval),
    }
}

/// Types whose elements the chunked pass can slice (not float0 or keys).
fn plain_dtype(d: DType) -> bool {
    !matches!(d, DType::Float0 | DType::Key)
}

/// The access pattern of `broadcast_in_dim(x, shape, dims)` when its kept
/// (non-unit) operand axes map onto one contiguous run of output axes in
/// order; `None` for other broadcasts (they run as ordinary kernels).
pub fn broadcast_access(x: &[usize], shape: &[usize], dims: &[usize]) -> Option<Access> {
    if x.len() != dims.len() || dims.windows(2).any(|w| matches!(w, [a, b] if a >= b)) {
        return None;
    }
    let kept: Vec<usize> = x
        .iter()
        .zip(dims)
        .filter(|(&d, _)| d != 1)
        .map(|(_, &o)| o)
        .collect();
    let size = x.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    let (Some(&first), Some(&last)) = (kept.first(), kept.last()) else {
        // Every operand axis has size 1: a scalar fill.
        return Some(Access { inner: 1, size: 1 });
    };
    let end = last.checked_add(1)?;
    if end.checked_sub(first)? != kept.len() {
        return None;
    }
    let run = shape
        .get(first..end)?
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    if run != size {
        return None;
    }
    let inner = shape
        .get(end..)?
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    Some(Access { inner, size })
}

/// Union-find over group ids.
fn find(parent: &mut [usize], g: usize) -> usize {
    let mut root = g;
    while let Some(&p) = parent.get(root) {
        if p == root {
            break;
        }
        root = p;
    }
    // Path compression.
    let mut cur = g;
    while let Some(&p) = parent.get(cur) {
        if p == root {
            break;
        }
        if let Some(slot) = parent.get_mut(cur) {
            *slot = root;
        }
        cur = p;
    }
    root
}

/// The fusion groups of `jx` with at least two members.
pub fn find_groups(jx: &Jaxpr) -> Result<Vec<Group>> {
    // Per group id: its shape, members, whether it is still open.
    let mut shapes: Vec<Vec<usize>> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut open: Vec<bool> = Vec::new();
    let mut parent: Vec<usize> = Vec::new();
    // Group id that produced each variable.
    let mut producer: Vec<Option<usize>> = vec![None; jx.avals.len()];
    for (i, eqn) in jx.eqns.iter().enumerate() {
        let shape = fusable_shape(jx, eqn);
        // Groups whose values this equation reads.
        let mut read: Vec<usize> = Vec::new();
        for a in &eqn.inputs {
            if let Atom::Var(v) = a {
                if let Some(Some(g)) = producer.get(v.index()) {
                    let r = find(&mut parent, *g);
                    if !read.contains(&r) {
                        read.push(r);
                    }
                }
            }
        }
        let Some(shape) = shape else {
            for g in read {
                if let Some(o) = open.get_mut(g) {
                    *o = false;
                }
            }
            continue;
        };
        let mut join: Vec<usize> = Vec::new();
        for &g in &read {
            let fits = open.get(g).copied().unwrap_or(false) && shapes.get(g) == Some(&shape);
            if fits {
                join.push(g);
            } else if let Some(o) = open.get_mut(g) {
                *o = false;
            }
        }
        let target = match join.split_first() {
            Some((&first, rest)) => {
                for &g in rest {
                    if let Some(p) = parent.get_mut(g) {
                        *p = first;
                    }
                    let moved = members.get_mut(g).map(std::mem::take).unwrap_or_default();
                    if let Some(m) = members.get_mut(first) {
                        m.extend(moved);
                    }
                }
                first
            }
            None => {
                let id = shapes.len();
                shapes.push(shape);
                members.push(Vec::new());
                open.push(true);
                parent.push(id);
                id
            }
        };
        if let Some(m) = members.get_mut(target) {
            m.push(i);
        }
        for v in &eqn.outputs {
            if let Some(slot) = producer.get_mut(v.index()) {
                *slot = Some(target);
            }
        }
    }
    let mut groups: Vec<Group> = shapes
        .into_iter()
        .zip(members)
        .filter(|(_, m)| m.len() >= 2)
        .map(|(shape, mut members)| {
            members.sort_unstable();
            Group { shape, members }
        })
        .collect();
    groups.sort_by_key(|g| g.members.last().copied());
    Ok(groups)
}
