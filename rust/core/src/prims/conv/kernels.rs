//! CPU kernel helpers of `conv_general_dilated`: window tables, im2col
//! column matrices, weight layout and the scatter of GEMM results into the
//! output.

use super::NAME;
use super::{at, spatial};
use crate::array::{alloc, checked_size, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::prims::kernel::BufElem;
use crate::prims::{DotDims, DotGeneral, Primitive};

// ----------------------------------------------------------------- kernel

/// Marks a window position that reads padding or a dilation hole.
const HOLE: usize = usize::MAX;

/// Odometer over a multi-index of `dims` (row-major order).
fn multi_indices(dims: &[usize]) -> Result<Vec<Vec<usize>>> {
    let total = checked_size(dims)?;
    let mut out = alloc::with_capacity("conv_general_dilated (indices)", total)?;
    let mut cur = vec![0usize; dims.len()];
    for _ in 0..total {
        out.push(cur.clone());
        for (c, &d) in cur.iter_mut().zip(dims).rev() {
            *c = c.saturating_add(1);
            if *c < d {
                break;
            }
            *c = 0;
        }
    }
    Ok(out)
}

/// Geometry of one spatial axis.
pub(super) struct Axis {
    pub(super) size: usize,
    pub(super) window: usize,
    pub(super) out: usize,
    pub(super) stride: usize,
    pub(super) lo: i64,
    pub(super) lhs_dil: usize,
    pub(super) rhs_dil: usize,
    /// Element stride of the axis in the lhs.
    pub(super) lhs_stride: usize,
}

impl Axis {
    /// Offset (in lhs elements) read by window position `k` at output `o`.
    fn offset(&self, o: usize, k: usize) -> usize {
        let pos = i64::try_from(o.saturating_mul(self.stride))
            .unwrap_or(i64::MAX)
            .saturating_add(i64::try_from(k.saturating_mul(self.rhs_dil)).unwrap_or(i64::MAX))
            .saturating_sub(self.lo);
        let Ok(pos) = usize::try_from(pos) else {
            return HOLE;
        };
        if pos.checked_rem(self.lhs_dil) != Some(0) {
            return HOLE;
        }
        let i = pos.checked_div(self.lhs_dil).unwrap_or(usize::MAX);
        if i >= self.size {
            return HOLE;
        }
        i.saturating_mul(self.lhs_stride)
    }
}

/// For every window position `kk` and output position `pp` (both flat,
/// row-major over the spatial axes), the lhs offset read, or `HOLE`.
pub(super) fn window_table(axes: &[Axis]) -> Result<(usize, usize, Vec<usize>)> {
    let ks: Vec<usize> = axes.iter().map(|a| a.window).collect();
    let ps: Vec<usize> = axes.iter().map(|a| a.out).collect();
    let table_shape = [checked_size(&ks)?, checked_size(&ps)?];
    crate::array::budget::check_shape(
        "conv_general_dilated (window table)",
        &table_shape,
        DType::U64,
    )?;
    let (kidx, pidx) = (multi_indices(&ks)?, multi_indices(&ps)?);
    let (kn, pn) = (kidx.len(), pidx.len());
    let mut table =
        alloc::with_capacity("conv_general_dilated (window table)", kn.saturating_mul(pn))?;
    for kk in &kidx {
        for pp in &pidx {
            let mut off = 0usize;
            for ((a, &k), &o) in axes.iter().zip(kk).zip(pp) {
                let d = a.offset(o, k);
                if d == HOLE {
                    off = HOLE;
                    break;
                }
                off = off.saturating_add(d);
            }
            table.push(off);
        }
    }
    Ok((kn, pn, table))
}

/// Sizes of the grouped problem.
pub(super) struct Groups {
    /// Number of groups (`feature_group_count * batch_group_count`).
    pub(super) count: usize,
    pub(super) feature: bool,
    /// Lhs channels per group, lhs batch rows per group, outputs per group.
    pub(super) cg: usize,
    pub(super) nb: usize,
    pub(super) og: usize,
}

/// A run of consecutive output positions reading consecutive lhs elements
/// from `off` (or padding, `HOLE`).
#[derive(Clone, Copy)]
struct Run {
    off: usize,
    len: usize,
}

/// `offs` as maximal runs, so rows are copied slice by slice.
fn runs(offs: &[usize]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    for &o in offs {
        if let Some(last) = out.last_mut() {
            let next = if last.off == HOLE {
                HOLE
            } else {
                last.off.saturating_add(last.len)
            };
            if (o == HOLE && last.off == HOLE) || (o != HOLE && o == next) {
                last.len = last.len.saturating_add(1);
                continue;
            }
        }
        out.push(Run { off: o, len: 1 });
    }
    out
}

/// Appends `run` of `src` from `base` (zeros for padding).
fn copy_run<T: Copy + Default>(col: &mut Vec<T>, src: &[T], base: usize, run: Run) {
    let start = base.saturating_add(run.off);
    match (run.off != HOLE)
        .then(|| src.get(start..start.saturating_add(run.len)))
        .flatten()
    {
        Some(s) => col.extend_from_slice(s),
        None => col.extend(std::iter::repeat_n(T::default(), run.len)),
    }
}

/// The column matrix `(groups, cg * kn, nb * pn)`.
#[allow(clippy::too_many_arguments)]
pub(super) fn im2col<T: Copy + Default>(
    src: &[T], g: &Groups, stride_n: usize, stride_c: usize, kn: usize, pn: usize, table: &[usize],
) -> Result<Vec<T>> {
    let len = checked_size(&[g.count, g.cg, kn, g.nb, pn])?;
    let rows: Vec<Vec<Run>> = (0..kn)
        .map(|kk| {
            runs(
                table
                    .get(kk.saturating_mul(pn)..kk.saturating_add(1).saturating_mul(pn))
                    .unwrap_or_default(),
            )
        })
        .collect();
    let mut col: Vec<T> = alloc::with_capacity("conv_general_dilated (im2col)", len)?;
    for gi in 0..g.count {
        let (gf, gb) = if g.feature { (gi, 0) } else { (0, gi) };
        for c in 0..g.cg {
            let ch = gf.saturating_mul(g.cg).saturating_add(c);
            for row_runs in &rows {
                for n in 0..g.nb {
                    let row = gb.saturating_mul(g.nb).saturating_add(n);
                    let base = row
                        .saturating_mul(stride_n)
                        .saturating_add(ch.saturating_mul(stride_c));
                    for &run in row_runs {
                        copy_run(&mut col, src, base, run);
                    }
                }
            }
        }
    }
    Ok(col)
}

/// The weights `(groups, og, cg * kn)` from the rhs in any layout.
pub(super) fn weights<T: Copy + Default>(
    src: &[T], g: &Groups, stride_o: usize, stride_i: usize, koffs: &[usize],
) -> Result<Vec<T>> {
    let n = g
        .count
        .saturating_mul(g.og)
        .saturating_mul(g.cg)
        .saturating_mul(koffs.len());
    let mut w = alloc::with_capacity("conv_general_dilated (weights)", n)?;
    for o in 0..g.count.saturating_mul(g.og) {
        for c in 0..g.cg {
            let base = o
                .saturating_mul(stride_o)
                .saturating_add(c.saturating_mul(stride_i));
            w.extend(
                koffs
                    .iter()
                    .map(|&k| src.get(base.saturating_add(k)).copied().unwrap_or_default()),
            );
        }
    }
    Ok(w)
}

/// Writes `res` `(groups * og, nb, pn)` into the output layout.
pub(super) fn scatter_out<T: Copy + Default>(
    res: &[T], len: usize, rows: (usize, usize, usize), stride_n: usize, stride_o: usize,
    poffs: &[usize],
) -> Result<Vec<T>> {
    let (o_total, nb, pn) = rows;
    let mut out = alloc::filled("conv_general_dilated", T::default(), len)?;
    let out_runs = runs(poffs);
    let mut chunks = res.chunks(pn.max(1));
    for o in 0..o_total {
        for n in 0..nb {
            let base = n
                .saturating_mul(stride_n)
                .saturating_add(o.saturating_mul(stride_o));
            let Some(mut row) = chunks.next() else {
                return Ok(out);
            };
            for run in &out_runs {
                let (head, tail) = row.split_at(run.len.min(row.len()));
                row = tail;
                let start = base.saturating_add(run.off);
                if let Some(dst) = out.get_mut(start..start.saturating_add(head.len())) {
                    dst.copy_from_slice(head);
                }
            }
        }
    }
    Ok(out)
}

/// Offsets of every multi-index of `dims` under `strides`.
pub(super) fn flat_offsets(dims: &[usize], strides: &[usize]) -> Result<Vec<usize>> {
    Ok(multi_indices(dims)?
        .into_iter()
        .map(|ix| {
            ix.iter()
                .zip(strides)
                .fold(0usize, |a, (&i, &s)| a.saturating_add(i.saturating_mul(s)))
        })
        .collect())
}

pub(super) fn pick(strides: &[usize], spec: &[usize], k: usize) -> usize {
    at(strides, spec, k)
}

pub(super) fn spatial_strides(strides: &[usize], spec: &[usize]) -> Vec<usize> {
    spatial(strides, spec)
}

// ------------------------------------------------------------ tiled kernel

/// Elements of one column tile (about 2 MB of f32): the tile is written,
/// then read once by the product while it is still in cache, instead of
/// one column matrix for the whole batch going through memory.
const TILE_ELEMS: usize = 1 << 19;

/// Where a tiled convolution reads and writes: the lhs batch-row and
/// channel strides, the output's batch and feature strides, the window
/// table (`kn` window positions by `pn` output positions) and the output
/// positions' offsets.
pub(super) struct TileGeometry<'a> {
    pub(super) g: &'a Groups,
    pub(super) lhs_n: usize,
    pub(super) lhs_c: usize,
    pub(super) out_n: usize,
    pub(super) out_o: usize,
    pub(super) kn: usize,
    pub(super) pn: usize,
    pub(super) table: &'a [usize],
    pub(super) poffs: &'a [usize],
}

/// Columns per tile for `ck` column rows and `pn` columns in all: tiles of
/// equal size holding at most about [`TILE_ELEMS`] elements (a function of
/// the shapes alone, so the bits do not depend on the thread count).
pub(super) fn tile_positions(ck: usize, pn: usize) -> usize {
    let tiles = ck
        .saturating_mul(pn)
        .div_ceil(TILE_ELEMS)
        .clamp(1, pn.max(1));
    pn.div_ceil(tiles).max(1)
}

/// A piece of a tile's columns: batch row `n`'s output positions
/// `p0..p1`, with the runs each window row reads there and the runs of
/// output offsets it writes.
struct Segment {
    n: usize,
    len: usize,
    reads: Vec<Vec<Run>>,
    writes: Vec<Run>,
}

/// The segments of columns `j0..j1` of the `(nb * pn)` column space.
fn segments(geo: &TileGeometry<'_>, j0: usize, j1: usize) -> Vec<Segment> {
    let pn = geo.pn.max(1);
    let mut out = Vec::new();
    let mut j = j0;
    while j < j1 {
        let (n, p0) = (
            j.checked_div(pn).unwrap_or(0),
            j.checked_rem(pn).unwrap_or(0),
        );
        let p1 = pn.min(p0.saturating_add(j1.saturating_sub(j)));
        let reads = (0..geo.kn)
            .map(|kk| {
                let at = kk.saturating_mul(pn);
                runs(
                    geo.table
                        .get(at.saturating_add(p0)..at.saturating_add(p1))
                        .unwrap_or_default(),
                )
            })
            .collect();
        let writes = runs(geo.poffs.get(p0..p1).unwrap_or_default());
        let len = p1.saturating_sub(p0);
        out.push(Segment {
            n,
            len,
            reads,
            writes,
        });
        j = j.saturating_add(len.max(1));
    }
    out
}

/// The `(C/G * K, width)` columns of one tile of group `(gf, gb)`.
fn gather_tile<T: Copy + Default>(
    src: &[T], geo: &TileGeometry<'_>, (gf, gb): (usize, usize), segs: &[Segment], len: usize,
) -> Result<Vec<T>> {
    let g = geo.g;
    let mut col: Vec<T> = alloc::with_capacity("conv_general_dilated (im2col tile)", len)?;
    for c in 0..g.cg {
        let ch = gf.saturating_mul(g.cg).saturating_add(c);
        for kk in 0..geo.kn {
            for seg in segs {
                let row = gb.saturating_mul(g.nb).saturating_add(seg.n);
                let base = row
                    .saturating_mul(geo.lhs_n)
                    .saturating_add(ch.saturating_mul(geo.lhs_c));
                for &run in seg.reads.get(kk).map_or(&[][..], |r| r.as_slice()) {
                    copy_run(&mut col, src, base, run);
                }
            }
        }
    }
    Ok(col)
}

/// Writes one result row into the output: consecutive pieces of `row` to
/// `base` plus each run's offset.
fn write_runs<T: Copy>(out: &mut [T], row: &[T], base: usize, runs: &[Run]) {
    let mut rest = row;
    for run in runs {
        let (head, tail) = rest.split_at(run.len.min(rest.len()));
        rest = tail;
        let start = base.saturating_add(run.off);
        if let Some(dst) = out.get_mut(start..start.saturating_add(head.len())) {
            dst.copy_from_slice(head);
        }
    }
}

/// The convolution as column tiles: the `(C/G * K, N/B * P)` column
/// matrix of each group (K window positions, P output positions) taken in
/// blocks of columns; each tile is gathered from the lhs, multiplied by the
/// group's `(O/G, C/G * K)` weights (`wts`, all groups) with the
/// `dot_general` kernel while in cache, and its `(O/G, block)` result
/// written into the output.
pub(super) fn conv_tiled<T: BufElem + Default>(
    ctx: &crate::exec::ExecCtx, src: &[T], wts: &[T], geo: &TileGeometry<'_>, out_len: usize,
) -> Result<Vec<T>> {
    let g = geo.g;
    let ck = g.cg.saturating_mul(geo.kn);
    let columns = g.nb.saturating_mul(geo.pn);
    let block = tile_positions(ck, columns);
    let mut out = alloc::filled("conv_general_dilated", T::default(), out_len)?;
    let group_w = g.og.saturating_mul(ck);
    let weights = (0..g.count)
        .map(|gi| {
            let w = wts
                .get(gi.saturating_mul(group_w)..gi.saturating_add(1).saturating_mul(group_w))
                .unwrap_or_default();
            HostArray::new(vec![g.og, ck], T::wrap(w.to_vec()))
        })
        .collect::<Result<Vec<_>>>()?;
    let dot = Primitive::DotGeneral(DotGeneral {
        dims: DotDims {
            lhs_contract: vec![1],
            rhs_contract: vec![0],
            lhs_batch: vec![],
            rhs_batch: vec![],
        },
        preferred_element_type: None,
    });
    let mut j0 = 0usize;
    while j0 < columns {
        let j1 = j0.saturating_add(block).min(columns);
        let width = j1.saturating_sub(j0);
        let segs = segments(geo, j0, j1);
        for (gi, w) in weights.iter().enumerate() {
            if j0 > 0 || gi > 0 {
                ctx.checkpoint()?;
            }
            let groups = if g.feature { (gi, 0) } else { (0, gi) };
            let col = gather_tile(src, geo, groups, &segs, ck.saturating_mul(width))?;
            let col = HostArray::new(vec![ck, width], T::wrap(col))?;
            let res = crate::prims::kernel::eval(ctx, &dot, &[w, &col])?;
            let res = res
                .first()
                .and_then(|r| T::slice(r.buffer()))
                .ok_or_else(|| Error::InvalidArgument(format!("{NAME}: dot gave no result")))?;
            for (o, rrow) in res.chunks(width.max(1)).enumerate() {
                let o_all = gi.saturating_mul(g.og).saturating_add(o);
                let mut rest = rrow;
                for seg in &segs {
                    let (piece, tail) = rest.split_at(seg.len.min(rest.len()));
                    rest = tail;
                    let base = seg
                        .n
                        .saturating_mul(geo.out_n)
                        .saturating_add(o_all.saturating_mul(geo.out_o));
                    write_runs(&mut out, piece, base, &seg.writes);
                }
            }
        }
        j0 = j1;
    }
    Ok(out)
}
