//! CPU kernel helpers of `conv_general_dilated`: window tables, im2col
//! column matrices, weight layout and the scatter of GEMM results into the
//! output.

use super::NAME;
use super::{at, spatial};
use crate::array::{alloc, checked_size, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::prims::kernel::{BufElem, FloatElem};
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

/// The `(C/G * K, width)` columns of one tile of group `(gf, gb)`, the
/// segments' batch rows offset by `n0`.
fn gather_tile<T: Copy + Default>(
    src: &[T], geo: &TileGeometry<'_>, (gf, gb): (usize, usize), segs: &[Segment], n0: usize,
    len: usize,
) -> Result<Vec<T>> {
    let g = geo.g;
    let mut col: Vec<T> = alloc::with_capacity("conv_general_dilated (im2col tile)", len)?;
    for c in 0..g.cg {
        let ch = gf.saturating_mul(g.cg).saturating_add(c);
        for kk in 0..geo.kn {
            for seg in segs {
                let row = gb
                    .saturating_mul(g.nb)
                    .saturating_add(n0)
                    .saturating_add(seg.n);
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

/// Runs `task(ctx, i)` for `i in 0..count` in waves of as many tasks as
/// the run has partitions, the tasks of a wave in parallel on the pool
/// (each task's kernels on its own thread, [`ExecCtx::for_task`]), with a
/// checkpoint on this thread before each wave; `consume(result)` takes the
/// results in task order. With one partition the tasks run here, in order.
/// How work is split into tasks never depends on the thread count, so
/// neither do the bits.
fn in_waves<R: Send>(
    ctx: &ExecCtx, count: usize, task: impl Fn(&ExecCtx, usize) -> Result<R> + Sync,
    mut consume: impl FnMut(R) -> Result<()>,
) -> Result<()> {
    use rayon::prelude::*;
    let parts = ctx.partitions(count);
    if parts <= 1 {
        for i in 0..count {
            ctx.checkpoint()?;
            consume(task(ctx, i)?)?;
        }
        return Ok(());
    }
    let sub = ctx.for_task();
    let mut i0 = 0usize;
    while i0 < count {
        ctx.checkpoint()?;
        let i1 = i0.saturating_add(parts).min(count);
        let results: Vec<Result<R>> = crate::exec::pool::install(|| {
            (i0..i1).into_par_iter().map(|i| task(&sub, i)).collect()
        });
        for r in results {
            consume(r?)?;
        }
        i0 = i1;
    }
    Ok(())
}

/// Runs `task(ctx, i, chunk)` over the consecutive `chunk`-element pieces
/// of `out` (the last may be shorter), in waves of as many tasks as the
/// run has partitions, each task writing its own piece; a checkpoint on
/// this thread before each wave. With one partition the tasks run here,
/// in order.
fn in_waves_into<T: Send>(
    ctx: &ExecCtx, out: &mut [T], chunk: usize,
    task: impl Fn(&ExecCtx, usize, &mut [T]) -> Result<()> + Sync,
) -> Result<()> {
    use rayon::prelude::*;
    let chunk = chunk.max(1);
    let parts = ctx.partitions(out.len().div_ceil(chunk));
    if parts <= 1 {
        for (i, piece) in out.chunks_mut(chunk).enumerate() {
            ctx.checkpoint()?;
            task(ctx, i, piece)?;
        }
        return Ok(());
    }
    let sub = ctx.for_task();
    for (w, region) in out.chunks_mut(parts.saturating_mul(chunk)).enumerate() {
        ctx.checkpoint()?;
        let first = w.saturating_mul(parts);
        let results: Vec<Result<()>> = crate::exec::pool::install(|| {
            region
                .par_chunks_mut(chunk)
                .enumerate()
                .map(|(j, piece)| task(&sub, first.saturating_add(j), piece))
                .collect()
        });
        for r in results {
            r?;
        }
    }
    Ok(())
}

/// The first element of a kernel's results as a `T` slice.
fn first_slice<T: BufElem>(res: &[HostArray]) -> Result<&[T]> {
    res.first()
        .and_then(|r| T::slice(r.buffer()))
        .ok_or_else(|| Error::InvalidArgument(format!("{NAME}: dot gave no result")))
}

/// `dot_general` contracting axis 1 of the lhs with axis `rhs_axis` of
/// the rhs (2-d operands, no batch axes).
fn product(rhs_axis: usize) -> Primitive {
    Primitive::DotGeneral(DotGeneral {
        dims: DotDims {
            lhs_contract: vec![1],
            rhs_contract: vec![rhs_axis],
            lhs_batch: vec![],
            rhs_batch: vec![],
        },
        preferred_element_type: None,
    })
}

/// The convolution as column tiles: the `(C/G * K, N/B * P)` column
/// matrix of each group (K window positions, P output positions) taken in
/// blocks of columns; each tile is gathered from the lhs, multiplied by the
/// group's `(O/G, C/G * K)` weights (`wts`, all groups) with the
/// `dot_general` kernel while in cache, and its `(O/G, block)` result
/// written into the output. Where the batch is the output's outermost axis
/// (and there are two batch rows or more) each batch row is one parallel
/// task that gathers, multiplies and writes its own tiles
/// ([`in_waves_into`]); otherwise tiles are gathered and multiplied in
/// parallel ([`in_waves`]) and their results written here. The tiles are a
/// function of the shapes alone, so the bits do not depend on the thread
/// count.
pub(super) fn conv_tiled<T: BufElem + Default>(
    ctx: &ExecCtx, src: &[T], wts: &[T], geo: &TileGeometry<'_>, out_len: usize,
) -> Result<Vec<T>> {
    let g = geo.g;
    let ck = g.cg.saturating_mul(geo.kn);
    // Every output element is written below (each group's features at
    // every batch row and output position), so the buffer comes from the
    // host pool: no zeroing pass, and warm pages in steady state.
    let mut out =
        crate::array::pool::take_overwritten("conv_general_dilated", T::default(), out_len)?;
    let group_w = g.og.saturating_mul(ck);
    let weights = (0..g.count)
        .map(|gi| {
            let w = wts
                .get(gi.saturating_mul(group_w)..gi.saturating_add(1).saturating_mul(group_w))
                .unwrap_or_default();
            HostArray::new(vec![g.og, ck], T::wrap(w.to_vec()))
        })
        .collect::<Result<Vec<_>>>()?;
    let tiles = ColumnTiles {
        src,
        geo,
        weights,
        dot: product(0),
        ck,
    };
    if g.nb > 1 && geo.out_n.checked_mul(g.nb) == Some(out_len) {
        tiles.by_batch_rows(ctx, &mut out)?;
    } else {
        tiles.in_column_blocks(ctx, &mut out)?;
    }
    Ok(out)
}

/// What every column tile of one convolution reads: the lhs, the
/// geometry, each group's `(O/G, C/G * K)` weights and the product.
struct ColumnTiles<'a, T> {
    src: &'a [T],
    geo: &'a TileGeometry<'a>,
    weights: Vec<HostArray>,
    dot: Primitive,
    ck: usize,
}

impl<T: BufElem + Default> ColumnTiles<'_, T> {
    /// Group `gi`'s tile over the columns of `segs` (their batch rows
    /// offset by `n0`): gathered and multiplied.
    fn multiply(
        &self, tctx: &ExecCtx, gi: usize, segs: &[Segment], n0: usize,
    ) -> Result<Vec<HostArray>> {
        let g = self.geo.g;
        let width: usize = segs.iter().map(|s| s.len).sum();
        let w = self
            .weights
            .get(gi)
            .ok_or_else(|| Error::InvalidArgument(format!("{NAME}: group weights")))?;
        let grp = if g.feature { (gi, 0) } else { (0, gi) };
        let col = gather_tile(
            self.src,
            self.geo,
            grp,
            segs,
            n0,
            self.ck.saturating_mul(width),
        )?;
        let col = HostArray::new(vec![self.ck, width], T::wrap(col))?;
        crate::prims::kernel::eval(tctx, &self.dot, &[w, &col])
    }

    /// Writes group `gi`'s `(O/G, width)` tile result; `n_stride`: the
    /// output's batch stride, or 0 when `out` is the tile's own batch row.
    fn write(
        &self, out: &mut [T], gi: usize, res: &[HostArray], segs: &[Segment], n_stride: usize,
    ) -> Result<()> {
        let geo = self.geo;
        let width: usize = segs.iter().map(|s| s.len).sum();
        for (o, rrow) in first_slice::<T>(res)?.chunks(width.max(1)).enumerate() {
            let o_all = gi.saturating_mul(geo.g.og).saturating_add(o);
            let mut rest = rrow;
            for seg in segs {
                let (piece, tail) = rest.split_at(seg.len.min(rest.len()));
                rest = tail;
                let base = seg
                    .n
                    .saturating_mul(n_stride)
                    .saturating_add(o_all.saturating_mul(geo.out_o));
                write_runs(out, piece, base, &seg.writes);
            }
        }
        Ok(())
    }

    /// The batch is the output's outermost axis: one task per batch row
    /// writes that row's outputs itself (every group, its positions in
    /// tiles of at most [`tile_positions`]), so results never wait for this
    /// thread. The tiles' runs are the same in every batch row: found once.
    fn by_batch_rows(&self, ctx: &ExecCtx, out: &mut [T]) -> Result<()> {
        let geo = self.geo;
        let block = tile_positions(self.ck, geo.pn).max(1);
        let blocks: Vec<Vec<Segment>> = (0..geo.pn)
            .step_by(block)
            .map(|p0| segments(geo, p0, p0.saturating_add(block).min(geo.pn)))
            .collect();
        in_waves_into(ctx, out, geo.out_n, |tctx, n, row| {
            for gi in 0..geo.g.count.max(1) {
                for segs in &blocks {
                    tctx.checkpoint()?;
                    let res = self.multiply(tctx, gi, segs, n)?;
                    self.write(row, gi, &res, segs, 0)?;
                }
            }
            Ok(())
        })
    }

    /// Tiles of the `(N/B * P)` columns of every group, gathered and
    /// multiplied in parallel, their results written here.
    fn in_column_blocks(&self, ctx: &ExecCtx, out: &mut [T]) -> Result<()> {
        let geo = self.geo;
        let columns = geo.g.nb.saturating_mul(geo.pn);
        let groups = geo.g.count.max(1);
        let block = tile_positions(self.ck, columns);
        let tiles = columns.div_ceil(block.max(1)).saturating_mul(groups);
        let task = |tctx: &ExecCtx, i: usize| -> Result<(usize, Vec<HostArray>, Vec<Segment>)> {
            let (t, gi) = (
                i.checked_div(groups).unwrap_or(0),
                i.checked_rem(groups).unwrap_or(0),
            );
            let j0 = t.saturating_mul(block);
            let segs = segments(geo, j0, j0.saturating_add(block).min(columns));
            let res = self.multiply(tctx, gi, &segs, 0)?;
            Ok((gi, res, segs))
        };
        in_waves(ctx, tiles, task, |(gi, res, segs)| {
            self.write(out, gi, &res, &segs, geo.out_n)
        })
    }
}

// ------------------------------------------------- row-tiled kernel

/// Window elements per column chunk of the row-tiled kernel at least (so
/// each product keeps a useful depth).
const MIN_CHUNK: usize = 256;

/// How many runs `offs` falls into ([`runs`] without building them).
fn count_runs(offs: impl Iterator<Item = usize>) -> usize {
    let mut count = 0usize;
    let mut next: Option<usize> = None;
    for o in offs {
        let joins = match next {
            Some(HOLE) => o == HOLE,
            Some(n) => o != HOLE && o == n,
            None => false,
        };
        if !joins {
            count = count.saturating_add(1);
        }
        next = Some(if o == HOLE { HOLE } else { o.saturating_add(1) });
    }
    count
}

/// Whether gathering along the window (one row of `(C/G * K)` elements per
/// output position) copies fewer, longer runs than gathering along the
/// output positions: true when the window is wider than the output, as in
/// the weight gradient of a convolution (a window the size of the image, a
/// 3x3 output).
pub(super) fn prefers_rows(geo: &TileGeometry<'_>) -> bool {
    let (kn, pn) = (geo.kn, geo.pn);
    let at = |kk: usize, p: usize| {
        geo.table
            .get(kk.saturating_mul(pn).saturating_add(p))
            .copied()
            .unwrap_or(HOLE)
    };
    let along_positions: usize = (0..kn)
        .map(|kk| count_runs((0..pn).map(|p| at(kk, p))))
        .sum();
    let along_window: usize = (0..pn)
        .map(|p| count_runs((0..kn).map(|kk| at(kk, p))))
        .sum();
    along_window.saturating_mul(2) < along_positions
}

/// For every output position, the runs its window reads in window order,
/// each with the window position it starts at.
fn window_runs(geo: &TileGeometry<'_>) -> Vec<Vec<(usize, Run)>> {
    let (kn, pn) = (geo.kn, geo.pn);
    (0..pn)
        .map(|p| {
            let offs: Vec<usize> = (0..kn)
                .map(|kk| {
                    geo.table
                        .get(kk.saturating_mul(pn).saturating_add(p))
                        .copied()
                        .unwrap_or(HOLE)
                })
                .collect();
            let mut start = 0usize;
            runs(&offs)
                .into_iter()
                .map(|r| {
                    let s = start;
                    start = start.saturating_add(r.len);
                    (s, r)
                })
                .collect()
        })
        .collect()
}

/// Appends window positions `lo..hi` of one output position (its `runs`)
/// read from `base`.
fn copy_window<T: Copy + Default>(
    col: &mut Vec<T>, src: &[T], base: usize, runs: &[(usize, Run)], (lo, hi): (usize, usize),
) {
    for &(start, run) in runs {
        let end = start.saturating_add(run.len);
        if end <= lo {
            continue;
        }
        if start >= hi {
            break;
        }
        let (a, b) = (lo.max(start), hi.min(end));
        let off = if run.off == HOLE {
            HOLE
        } else {
            run.off.saturating_add(a.saturating_sub(start))
        };
        let len = b.saturating_sub(a);
        copy_run(col, src, base, Run { off, len });
    }
}

/// One row tile of one group: the rows `(n, p)` in `rows`, each holding the
/// window elements `chunk` (of the `C/G * K` window elements, channel
/// major) read at output position `p` of batch row `n`.
fn gather_rows<T: Copy + Default>(
    src: &[T], geo: &TileGeometry<'_>, (gf, gb): (usize, usize), wr: &[Vec<(usize, Run)>],
    rows: (usize, usize), chunk: (usize, usize),
) -> Result<Vec<T>> {
    let (g, kn, pn) = (geo.g, geo.kn.max(1), geo.pn.max(1));
    let len = rows
        .1
        .saturating_sub(rows.0)
        .saturating_mul(chunk.1.saturating_sub(chunk.0));
    let mut col: Vec<T> = alloc::with_capacity("conv_general_dilated (row tile)", len)?;
    for j in rows.0..rows.1 {
        let (n, p) = (
            j.checked_div(pn).unwrap_or(0),
            j.checked_rem(pn).unwrap_or(0),
        );
        let row = gb.saturating_mul(g.nb).saturating_add(n);
        let runs = wr.get(p).map_or(&[][..], |r| r.as_slice());
        let mut k = chunk.0;
        while k < chunk.1 {
            let (c, kk0) = (
                k.checked_div(kn).unwrap_or(0),
                k.checked_rem(kn).unwrap_or(0),
            );
            let kk1 = kn.min(kk0.saturating_add(chunk.1.saturating_sub(k)));
            let ch = gf.saturating_mul(g.cg).saturating_add(c);
            let base = row
                .saturating_mul(geo.lhs_n)
                .saturating_add(ch.saturating_mul(geo.lhs_c));
            copy_window(&mut col, src, base, runs, (kk0, kk1));
            k = k.saturating_add(kk1.saturating_sub(kk0).max(1));
        }
    }
    Ok(col)
}

/// Row and column-chunk sizes of the row-tiled kernel: tiles of about
/// [`TILE_ELEMS`], at least [`MIN_CHUNK`] window elements deep (a function
/// of the shapes alone, so the bits do not depend on the thread count).
fn row_tiles(rows: usize, ck: usize) -> (usize, usize) {
    let chunk = TILE_ELEMS
        .checked_div(rows.max(1))
        .unwrap_or(1)
        .clamp(MIN_CHUNK.min(ck).max(1), ck.max(1));
    let block = TILE_ELEMS
        .checked_div(chunk)
        .unwrap_or(1)
        .clamp(1, rows.max(1));
    (block, chunk)
}

/// The `(rows, O/G)` result of one row tile of group `gi`: the tile's
/// column chunks gathered and multiplied by the matching columns of the
/// group's `(O/G, C/G * K)` weights `w` in parallel ([`in_waves`]), the
/// products added up here in chunk order.
#[allow(clippy::too_many_arguments)]
fn row_tile_product<T: BufElem + FloatElem + Default>(
    ctx: &ExecCtx, src: &[T], w: &[T], geo: &TileGeometry<'_>, wr: &[Vec<(usize, Run)>], gi: usize,
    rows: (usize, usize), chunk: usize,
) -> Result<Vec<T>> {
    let g = geo.g;
    let ck = g.cg.saturating_mul(geo.kn);
    let groups = if g.feature { (gi, 0) } else { (0, gi) };
    let dot = product(1);
    let height = rows.1.saturating_sub(rows.0);
    let chunk = chunk.max(1);
    let task = |tctx: &ExecCtx, c: usize| -> Result<Vec<HostArray>> {
        let k0 = c.saturating_mul(chunk);
        let k1 = k0.saturating_add(chunk).min(ck);
        let depth = k1.saturating_sub(k0);
        let tile = gather_rows(src, geo, groups, wr, rows, (k0, k1))?;
        let mut wc: Vec<T> =
            alloc::with_capacity("conv_general_dilated (weights)", g.og.saturating_mul(depth))?;
        for o in 0..g.og {
            let at = o.saturating_mul(ck);
            let part = w
                .get(at.saturating_add(k0)..at.saturating_add(k1))
                .ok_or_else(|| Error::InvalidArgument(format!("{NAME}: weight chunk")))?;
            wc.extend_from_slice(part);
        }
        let tile = HostArray::new(vec![height, depth], T::wrap(tile))?;
        let wc = HostArray::new(vec![g.og, depth], T::wrap(wc))?;
        crate::prims::kernel::eval(tctx, &dot, &[&tile, &wc])
    };
    let mut acc: Option<Vec<T>> = None;
    in_waves(ctx, ck.div_ceil(chunk), task, |res| {
        let res = first_slice::<T>(&res)?;
        match acc.as_mut() {
            None => acc = Some(res.to_vec()),
            Some(a) => {
                for (x, &y) in a.iter_mut().zip(res) {
                    *x = FloatElem::add(*x, y);
                }
            }
        }
        Ok(())
    })?;
    acc.ok_or_else(|| Error::InvalidArgument(format!("{NAME}: empty window")))
}

/// The convolution in row tiles, for windows wider than their output
/// ([`prefers_rows`]): the `(N/B * P, C/G * K)` transpose of each group's
/// column matrix taken in tiles of rows and column chunks, each tile
/// gathered along the window (long runs where the column tiles of
/// [`conv_tiled`] would copy runs as short as the output), multiplied by
/// the weights' transpose, the chunks summed, and the `(rows, O/G)` result
/// written into the output.
pub(super) fn conv_tiled_rows<T: BufElem + FloatElem + Default>(
    ctx: &ExecCtx, src: &[T], wts: &[T], geo: &TileGeometry<'_>, out_len: usize,
) -> Result<Vec<T>> {
    let g = geo.g;
    let (ck, pn) = (g.cg.saturating_mul(geo.kn), geo.pn.max(1));
    let rows = g.nb.saturating_mul(geo.pn);
    let (block, chunk) = row_tiles(rows, ck);
    let wr = window_runs(geo);
    let mut out = alloc::filled("conv_general_dilated", T::default(), out_len)?;
    let group_w = g.og.saturating_mul(ck);
    for gi in 0..g.count {
        let w = wts
            .get(gi.saturating_mul(group_w)..gi.saturating_add(1).saturating_mul(group_w))
            .unwrap_or_default();
        let mut j0 = 0usize;
        while j0 < rows {
            let j1 = j0.saturating_add(block).min(rows);
            let acc = row_tile_product(ctx, src, w, geo, &wr, gi, (j0, j1), chunk)?;
            for (j, arow) in (j0..j1).zip(acc.chunks(g.og.max(1))) {
                let (n, p) = (
                    j.checked_div(pn).unwrap_or(0),
                    j.checked_rem(pn).unwrap_or(0),
                );
                let base = n
                    .saturating_mul(geo.out_n)
                    .saturating_add(geo.poffs.get(p).copied().unwrap_or(0));
                for (o, &v) in arow.iter().enumerate() {
                    let o_all = gi.saturating_mul(g.og).saturating_add(o);
                    let at = base.saturating_add(o_all.saturating_mul(geo.out_o));
                    if let Some(d) = out.get_mut(at) {
                        *d = v;
                    }
                }
            }
            j0 = j1;
        }
    }
    Ok(out)
}
