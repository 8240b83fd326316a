"""The implementation of `microjax_rs.numpy` (`jax.numpy`), one module per subject.

Layers, lowest first (each module imports only the ones before it):
`util` (promotion, broadcasting, argument helpers) -> `lax_numpy` (array
construction, shapes, joining) -> `scalar_types` (scalar types and dtype
queries) -> `ufuncs` (elementwise functions) -> `indexing` (`x[idx]`,
`x.at[...]`, take/select/diagonal) -> `reductions` (reductions, cumulative
sums, differences) -> `manipulation` (split, repeat, roll, pad) -> `sorting`
(sorting, searching, counting, order statistics) -> `setops` (unique, isin,
the 1-D set functions); `array_creation` (linspace family), `index_tricks`
(r_, c_, mgrid, ..., triangle indices), `histogram` (histograms, digitize),
`tensor_contractions`, `statistics` (cov, corrcoef), `einsum`, `linalg` and
`array_methods` (the array operators and methods) sit on top, with
`ufunc_api` (the `jnp.ufunc` objects), `polynomial`, `window_functions`,
`numerical_calculus` (gradient, trapezoid, unwrap) and `bit_packing`. The
public namespace `microjax_rs.numpy` only re-exports.
"""
