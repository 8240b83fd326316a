//! Elementwise fusion: which equations run together in one pass.
//!
//! A group is a set of elementwise equations (unary, binary, comparisons,
//! `integer_pow`, `select_n`, converts, `clamp`, `is_finite`, `round`) and
//! broadcasts of outside values and reshapes, all producing the same
//! number of elements (row-major, so element `i` is element `i` of every
//! member). Its members
//! run at the position of its last member, chunk by chunk, so the
//! intermediate values never leave the cache.
//!
//! Equations are visited in program order. A fusable equation joins the
//! open groups of its size that produce its operands (merging them), or
//! starts a group. A group *closes* as soon as an equation outside it reads
//! one of its values: that reader runs before the group's later members
//! would, so nothing may join afterwards. Moving pure members later past
//! other equations never changes what the program computes, and effectful
//! equations are never members.

use crate::dtype::DType;
use crate::error::Result;
use crate::ir::{Atom, Aval, Eqn, Jaxpr};
use crate::prims::Primitive;
use crate::prims::{
    BroadcastInDim, Clamp, ConvertElementType, IntegerPow, IsFinite, Reshape, Round, SelectN,
    Squeeze,
};

/// How an outside value is read by the group, per element of the group's
/// shape: element `i` reads operand element `(i / inner) % size`.
///
/// This covers a full-shape operand (`inner = 1, size = n`), a scalar
/// (`size = 1`) and every broadcast whose kept axes are one contiguous run
/// of output axes (a bias row, a column, a scalar).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Access {
    pub inner: usize,
    pub size: usize,
}

/// Equations fused into one pass (indices into the program's equations,
/// in program order). Members agree on the element count; `shape` is the
/// first member's output shape (reshapes inside a group only rename it).
#[derive(Debug, Clone)]
pub struct Group {
    pub shape: Vec<usize>,
    pub members: Vec<usize>,
}

/// Whether `prim` computes each output element from the operand elements
/// at its own index alone (rank-0 operands broadcast): the primitives a
/// fused pass, and a generated CUDA kernel, evaluate element by element.
pub fn is_elementwise(prim: &Primitive) -> bool {
    matches!(
        prim,
        Primitive::Unary(_)
            | Primitive::Binary(_)
            | Primitive::Compare(_)
            | Primitive::IntegerPow(IntegerPow { .. })
            | Primitive::SelectN(SelectN)
            | Primitive::ConvertElementType(ConvertElementType { .. })
            | Primitive::Clamp(Clamp)
            | Primitive::IsFinite(IsFinite)
            | Primitive::Round(Round { .. })
    )
}

/// The output aval of an equation that can join a group.
fn fusable_output<'a>(jx: &'a Jaxpr, eqn: &Eqn) -> Option<&'a Aval> {
    let [out] = eqn.outputs.as_slice() else {
        return None;
    };
    let aval = jx.aval(*out).ok()?;
    if !plain_dtype(aval.dtype) {
        return None;
    }
    let ok = if is_elementwise(&eqn.prim) {
        eqn.inputs.iter().all(|a| match operand_aval(jx, a) {
            Some(x) => plain_dtype(x.dtype) && (x.shape == aval.shape || x.shape.is_empty()),
            None => false,
        })
    } else {
        match (&eqn.prim, eqn.inputs.as_slice()) {
            // A broadcast literal stays a kernel (the group reads outside
            // values through variables).
            (
                Primitive::BroadcastInDim(BroadcastInDim {
                    shape,
                    broadcast_dimensions,
                }),
                [a @ Atom::Var(_)],
            ) => operand_aval(jx, a).is_some_and(|x| {
                plain_dtype(x.dtype)
                    && broadcast_access(&x.shape, shape, broadcast_dimensions).is_some()
            }),
            // Same elements in the same order: an alias inside the group.
            (
                Primitive::Reshape(Reshape { .. }) | Primitive::Squeeze(Squeeze { .. }),
                [Atom::Var(_)],
            ) => true,
            _ => false,
        }
    };
    ok.then_some(aval)
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

/// The access pattern of `broadcast_in_dim(x, shape, dims)` when the
/// operand's non-unit axes land on one contiguous run of output axes (unit
/// output axes ignored), in order; `None` for other broadcasts (they run as
/// ordinary kernels).
pub fn broadcast_access(x: &[usize], shape: &[usize], dims: &[usize]) -> Option<Access> {
    if x.len() != dims.len() || dims.windows(2).any(|w| matches!(w, [a, b] if a >= b)) {
        return None;
    }
    let size = x.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    // Output axes of size > 1, each marked kept (read from the operand) or
    // broadcast.
    let axes: Vec<(usize, bool)> = shape
        .iter()
        .enumerate()
        .filter(|(_, &d)| d != 1)
        .map(|(o, &d)| {
            let kept = dims
                .iter()
                .position(|&p| p == o)
                .and_then(|k| x.get(k))
                .is_some_and(|&xd| xd != 1);
            (d, kept)
        })
        .collect();
    let first = axes.iter().position(|&(_, k)| k);
    let last = axes.iter().rposition(|&(_, k)| k);
    let (Some(first), Some(last)) = (first, last) else {
        // Nothing read along any axis: a scalar fill.
        return Some(Access { inner: 1, size: 1 });
    };
    let run = axes.get(first..=last)?;
    if run.iter().any(|&(_, k)| !k) {
        return None;
    }
    let run_size = run
        .iter()
        .try_fold(1usize, |acc, &(d, _)| acc.checked_mul(d))?;
    if run_size != size {
        return None;
    }
    let inner = axes
        .get(last.checked_add(1)?..)?
        .iter()
        .try_fold(1usize, |acc, &(d, _)| acc.checked_mul(d))?;
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
/// For each of `n_eqns` equations, the group holding it and whether it is
/// that group's last member (where the group runs); `None` outside groups.
pub fn group_owners(n_eqns: usize, groups: &[Group]) -> Vec<Option<(usize, bool)>> {
    let mut owner: Vec<Option<(usize, bool)>> = vec![None; n_eqns];
    for (g, group) in groups.iter().enumerate() {
        let last = group.members.last().copied();
        for &m in &group.members {
            if let Some(slot) = owner.get_mut(m) {
                *slot = Some((g, Some(m) == last));
            }
        }
    }
    owner
}

pub fn find_groups(jx: &Jaxpr) -> Result<Vec<Group>> {
    // Per group id: its shape, members, whether it is still open.
    let mut shapes: Vec<Vec<usize>> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut open: Vec<bool> = Vec::new();
    let mut parent: Vec<usize> = Vec::new();
    // Group id that produced each variable.
    let mut producer: Vec<Option<usize>> = vec![None; jx.avals.len()];
    for (i, eqn) in jx.eqns.iter().enumerate() {
        let out = fusable_output(jx, eqn);
        let read = groups_read(eqn, &producer, &mut parent);
        let Some(out) = out else {
            for g in read {
                if let Some(o) = open.get_mut(g) {
                    *o = false;
                }
            }
            continue;
        };
        let size = out.size()?;
        let mut join: Vec<usize> = Vec::new();
        for &g in &read {
            // A rank-0 group and a one-element group of higher rank have
            // the same size but not the same values: a rank-0 member would
            // meet full-shape ones in one instruction (e.g. as a `select_n`
            // case), so they stay apart (the later reads the former as an
            // outside value).
            let fits = open.get(g).copied().unwrap_or(false)
                && sizes.get(g) == Some(&size)
                && shapes.get(g).map(Vec::is_empty) == Some(out.shape.is_empty());
            if fits {
                join.push(g);
            } else if let Some(o) = open.get_mut(g) {
                *o = false;
            }
        }
        let target = match join.first() {
            Some(&first) => merge_groups(first, &join, &mut shapes, &mut members, &mut parent),
            None => {
                let id = shapes.len();
                shapes.push(out.shape.clone());
                sizes.push(size);
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
    Ok(finished_groups(jx, shapes, members))
}

/// Merges the groups `join` (`first` among them) into the one with the most
/// members, which takes `first`'s shape, and returns it. The largest group
/// takes the others' members, so each member moves O(log n) times: building
/// the groups stays n log n.
fn merge_groups(
    first: usize, join: &[usize], shapes: &mut [Vec<usize>], members: &mut [Vec<usize>],
    parent: &mut [usize],
) -> usize {
    let largest = join
        .iter()
        .copied()
        .max_by_key(|&g| members.get(g).map_or(0, Vec::len))
        .unwrap_or(first);
    if largest != first {
        let shape = shapes.get(first).cloned().unwrap_or_default();
        if let Some(s) = shapes.get_mut(largest) {
            *s = shape;
        }
    }
    for &g in join {
        if g == largest {
            continue;
        }
        if let Some(p) = parent.get_mut(g) {
            *p = largest;
        }
        let moved = members.get_mut(g).map(std::mem::take).unwrap_or_default();
        if let Some(m) = members.get_mut(largest) {
            m.extend(moved);
        }
    }
    largest
}

/// The (root) groups whose values `eqn` reads, each once.
fn groups_read(
    eqn: &crate::ir::Eqn, producer: &[Option<usize>], parent: &mut [usize],
) -> Vec<usize> {
    let mut read: Vec<usize> = Vec::new();
    for a in &eqn.inputs {
        if let Atom::Var(v) = a {
            if let Some(Some(g)) = producer.get(v.index()) {
                let r = find(parent, *g);
                if !read.contains(&r) {
                    read.push(r);
                }
            }
        }
    }
    read
}

/// The groups of two or more members, members in program order, groups in
/// the order of their last member.
fn finished_groups(jx: &Jaxpr, shapes: Vec<Vec<usize>>, members: Vec<Vec<usize>>) -> Vec<Group> {
    // A group of reshapes and squeezes only would copy what each of them
    // reads in place (views of their operands) when run alone.
    let computes = |i: &usize| {
        jx.eqns.get(*i).is_some_and(|e| {
            !matches!(
                e.prim,
                Primitive::Reshape(Reshape { .. }) | Primitive::Squeeze(Squeeze { .. })
            )
        })
    };
    let mut groups: Vec<Group> = shapes
        .into_iter()
        .zip(members)
        .filter(|(_, m)| m.len() >= 2 && m.iter().any(computes))
        .map(|(shape, mut members)| {
            members.sort_unstable();
            Group { shape, members }
        })
        .collect();
    groups.sort_by_key(|g| g.members.last().copied());
    groups
}
