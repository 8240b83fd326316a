//! The batching (vmap) helpers of the collectives: a collective over the
//! axis being mapped becomes an ordinary computation over that axis; one over
//! another axis keeps the collective with the mapped axis moved out of its way.

use super::*;

/// `x` with its mapped axis (or a broadcast one) at position 0.
pub(super) fn batch_front(b: &mut Builder, x: &Atom, d: Option<usize>, n: usize) -> Result<Atom> {
    match d {
        Some(d) => move_axis(b, x.clone(), d, 0),
        None => add_batch_axis(b, x.clone(), n, 0),
    }
}

pub(super) fn reshape(b: &mut Builder, x: Atom, new_sizes: Vec<usize>) -> Result<Atom> {
    b.add_eqn1(Primitive::Reshape(Reshape { new_sizes }), vec![x])
}

/// `shape` with axes `k` and `k + 1` merged.
pub(super) fn merge_axes(shape: &[usize], k: usize) -> Result<Vec<usize>> {
    let next = k.saturating_add(1);
    let (Some(&a), Some(&c)) = (shape.get(k), shape.get(next)) else {
        return Err(Error::InvalidArgument(format!(
            "vmap of a collective: cannot merge axes {k} and {next} of shape {shape:?}"
        )));
    };
    let merged = a.checked_mul(c).ok_or_else(|| Error::Overflow {
        what: "vmap of a collective",
        detail: format!("{shape:?}"),
    })?;
    let mut out: Vec<usize> = shape.get(..k).unwrap_or_default().to_vec();
    out.push(merged);
    out.extend_from_slice(shape.get(next.saturating_add(1)..).unwrap_or_default());
    Ok(out)
}

/// `shape` with axis `k` split into `(n, shape[k] / n)`.
pub(super) fn split_axis(shape: &[usize], k: usize, n: usize) -> Vec<usize> {
    let mut out = shape.to_vec();
    let s = out.get(k).copied().unwrap_or(0);
    if let Some(slot) = out.get_mut(k) {
        *slot = s.checked_div(n).unwrap_or(0);
    }
    out.insert(k, n);
    out
}

pub(super) fn check_size(c: &Collective, want: usize, n: usize) -> Result<()> {
    if want != n {
        return Err(Error::param(
            c.name(),
            "axis_size",
            format!("{want} does not match the size {n} of the mapped axis"),
        ));
    }
    Ok(())
}

/// `x * n` (psum of a value equal on every example).
pub(super) fn scale(b: &mut Builder, x: Atom, n: usize) -> Result<Atom> {
    let dtype = b.aval(&x)?.dtype;
    #[allow(clippy::cast_precision_loss)]
    let lit = Builder::lit(dtype, n as f64);
    b.binary(BinaryOp::Mul, x, lit)
}

pub(super) fn batch_all_reduce(
    b: &mut Builder, op: AllReduceOp, axes: &[String], ins: &[Atom], dims: &[Option<usize>],
    n: usize, here: Option<&str>,
) -> Result<Batched> {
    let mut outs = Vec::with_capacity(ins.len());
    let mut odims = Vec::with_capacity(ins.len());
    for (x, d) in ins.iter().zip(dims) {
        let (y, yd) = match (here, d) {
            (None, _) => (x.clone(), *d),
            (Some(_), Some(d)) => {
                let rop = match op {
                    AllReduceOp::Sum => ReduceOp::Sum,
                    AllReduceOp::Max => ReduceOp::Max,
                    AllReduceOp::Min => ReduceOp::Min,
                };
                let r = b.reduce(rop, x.clone(), vec![*d])?;
                (r, None)
            }
            (Some(_), None) => match op {
                AllReduceOp::Sum => (scale(b, x.clone(), n)?, None),
                AllReduceOp::Max | AllReduceOp::Min => (x.clone(), None),
            },
        };
        outs.push(y);
        odims.push(yd);
    }
    let rest: Vec<String> = axes
        .iter()
        .filter(|a| Some(a.as_str()) != here)
        .cloned()
        .collect();
    if !rest.is_empty() {
        outs = emit(b, Collective::AllReduce { op, axes: rest }, outs)?;
    }
    Ok((outs, odims))
}

/// A collective over an outer axis: bound again on the batched operand.
pub(super) fn batch_other_axis(
    c: &Collective, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
) -> Result<Batched> {
    let mut shifted = c.clone();
    match &mut shifted {
        Collective::AllGather {
            all_gather_dimension: axis,
            ..
        }
        | Collective::ReduceScatter {
            scatter_dimension: axis,
            ..
        } => *axis = axis.saturating_add(1),
        Collective::AllToAll {
            split_axis,
            concat_axis,
            ..
        } => {
            *split_axis = split_axis.saturating_add(1);
            *concat_axis = concat_axis.saturating_add(1);
        }
        // Elementwise over examples, or no operands: the batch dim stays.
        Collective::Ppermute { .. }
        | Collective::AllReduce { .. }
        | Collective::AxisIndex { .. } => {
            let outs = emit(b, shifted, ins.to_vec())?;
            let odims = if ins.is_empty() {
                vec![None; outs.len()]
            } else {
                dims.to_vec()
            };
            return Ok((outs, odims));
        }
    }
    let x = one(c.name(), ins)?;
    let d = *one(c.name(), dims)?;
    let x0 = batch_front(b, x, d, n)?;
    Ok((vec![emit1(b, shifted, vec![x0])?], vec![Some(0)]))
}

/// `all_to_all` over the mapped axis of `x` (mapped axis in front): example
/// `j` of the result concatenates, along `concat`, block `j` (of `split`) of
/// every example `k` in order.
pub(super) fn all_to_all_mapped(
    b: &mut Builder, x: Atom, split: usize, concat: usize, n: usize,
) -> Result<Atom> {
    let shape = b.aval(&x)?.shape;
    let rank = shape.len().saturating_sub(1);
    // Axes of `x` split: [k, ..., j, m, ...] with (j, m) at split + 1.
    let split_shape = split_axis(&shape, split.saturating_add(1), n);
    let y = reshape(b, x, split_shape.clone())?;
    // Position in `y` of per-example axis i (its block part m for the split axis).
    let pos = |i: usize| -> usize {
        if i < split {
            i.saturating_add(1)
        } else if i == split {
            split.saturating_add(2)
        } else {
            i.saturating_add(2)
        }
    };
    let mut perm = vec![split.saturating_add(1)];
    for i in 0..rank {
        if i == concat {
            perm.push(0);
        }
        perm.push(pos(i));
    }
    let moved = b.add_eqn1(
        Primitive::Transpose(Transpose {
            permutation: perm.clone(),
        }),
        vec![y],
    )?;
    let moved_shape: Vec<usize> = perm
        .iter()
        .map(|&p| split_shape.get(p).copied().unwrap_or(0))
        .collect();
    let out_shape = merge_axes(&moved_shape, concat.saturating_add(1))?;
    reshape(b, moved, out_shape)
}

/// `ppermute` over the mapped axis of `x` (in front): example `dst` takes
/// example `src`'s value, zeros where no pair sends.
pub(super) fn ppermute_mapped(
    b: &mut Builder, x: Atom, perm: &[(usize, usize)], n: usize,
) -> Result<Atom> {
    let aval = b.aval(&x)?;
    let mut row_shape = aval.shape.clone();
    if let Some(first) = row_shape.first_mut() {
        *first = 1;
    }
    let mut rows = Vec::with_capacity(n);
    for dst in 0..n {
        let row = match perm.iter().find(|p| p.1 == dst) {
            Some(&(src, _)) if src < n => {
                let mut start = vec![0; aval.ndim()];
                let mut limit = aval.shape.clone();
                if let (Some(s), Some(l)) = (start.first_mut(), limit.first_mut()) {
                    *s = src;
                    *l = src.saturating_add(1);
                }
                b.add_eqn1(
                    Primitive::Slice(Slice {
                        start_indices: start,
                        limit_indices: limit,
                        strides: None,
                    }),
                    vec![x.clone()],
                )?
            }
            _ => b.zeros(&Aval::new(row_shape.clone(), aval.dtype))?,
        };
        rows.push(row);
    }
    if rows.is_empty() {
        return Ok(x);
    }
    b.add_eqn1(Primitive::Concatenate(Concatenate { dimension: 0 }), rows)
}

/// vmap of `c` (not `psum`-like, not `axis_index`) over the axis it names:
/// the collective becomes array code over the batch dim. Returns the
/// result and its batch dim.
pub(super) fn batch_over_axis(
    c: &Collective, b: &mut Builder, x: Atom, d: Option<usize>, n: usize,
) -> Result<(Atom, Option<usize>)> {
    if let Collective::AllGather { axis_size, .. }
    | Collective::ReduceScatter { axis_size, .. }
    | Collective::AllToAll { axis_size, .. } = c
    {
        check_size(c, *axis_size, n)?;
    }
    Ok(match c {
        Collective::AllGather {
            all_gather_dimension: g,
            tiled,
            ..
        } => all_gather_mapped(b, x, d, n, *g, *tiled)?,
        Collective::ReduceScatter {
            scatter_dimension: s,
            tiled,
            ..
        } => reduce_scatter_mapped(b, x, d, n, *s, *tiled)?,
        Collective::AllToAll {
            split_axis: a,
            concat_axis: k,
            ..
        } => {
            let x0 = batch_front(b, &x, d, n)?;
            (all_to_all_mapped(b, x0, *a, *k, n)?, Some(0))
        }
        Collective::Ppermute { perm, .. } => {
            let x0 = batch_front(b, &x, d, n)?;
            (ppermute_mapped(b, x0, perm, n)?, Some(0))
        }
        Collective::AllReduce { .. } | Collective::AxisIndex { .. } => {
            return Err(Error::InvalidArgument(format!(
                "vmap of {}: handled above",
                c.name()
            )))
        }
    })
}

/// `all_gather` along dim `g` over the batch dim `d` of `x`: every example
/// sees the same stack, an unbatched result.
pub(super) fn all_gather_mapped(
    b: &mut Builder, x: Atom, d: Option<usize>, n: usize, g: usize, tiled: bool,
) -> Result<(Atom, Option<usize>)> {
    let stacked = match d {
        Some(d) => move_axis(b, x, d, g)?,
        None => add_batch_axis(b, x, n, g)?,
    };
    if tiled {
        let shape = merge_axes(&b.aval(&stacked)?.shape, g)?;
        Ok((reshape(b, stacked, shape)?, None))
    } else {
        Ok((stacked, None))
    }
}

/// `reduce_scatter` along dim `s` over the batch dim `d` of `x`: the sum
/// over the batch, whose block `j` of the scatter dimension belongs to
/// example `j`.
pub(super) fn reduce_scatter_mapped(
    b: &mut Builder, x: Atom, d: Option<usize>, n: usize, s: usize, tiled: bool,
) -> Result<(Atom, Option<usize>)> {
    let total = match d {
        Some(d) => b.reduce(ReduceOp::Sum, x, vec![d])?,
        None => scale(b, x, n)?,
    };
    if tiled {
        let shape = split_axis(&b.aval(&total)?.shape, s, n);
        Ok((reshape(b, total, shape)?, Some(s)))
    } else {
        Ok((total, Some(s)))
    }
}
