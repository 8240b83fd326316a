"""`lax.approx_max_k` / `lax.approx_min_k`. As on JAX's CPU backend, the
search is exact: the `k` largest (smallest) entries along
`reduction_dimension`, ties broken by the lower index."""
from .. import core, dtypes


def _top(operand, k, reduction_dimension, aggregate_to_topk, largest):
    from . import _arr, _canon_axis, broadcast_in_dim, iota, slice_in_dim, sort, top_k

    operand = _arr(operand)
    aval = core.get_aval(operand)
    if not dtypes.is_float_name(aval.dtype_name):
        raise ValueError("operand must be a floating type")
    if not -aval.ndim <= int(reduction_dimension) < aval.ndim:
        raise IndexError("list index out of range")
    dim = _canon_axis(reduction_dimension, aval.ndim)
    n = aval.shape[dim]
    k = int(k)
    if k <= 0:
        raise ValueError(f"k must be greater than 0, got {k}")
    if k > n:
        raise ValueError(f"k must be smaller than the size of reduction_dim {n}, got {k}")
    if not aggregate_to_topk:
        k = n  # the unaggregated result of a small reduction holds every entry, sorted
    if largest:
        values, indices = top_k(operand, k, axis=dim)
        return [values, indices]
    idx = broadcast_in_dim(iota("int32", n), aval.shape, (dim,))
    values, indices = sort((operand, idx), dimension=dim, num_keys=1)
    return [slice_in_dim(values, 0, k, axis=dim), slice_in_dim(indices, 0, k, axis=dim)]


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """`[values, indices]` of the `k` largest entries along `reduction_dimension`
    (exact; `recall_target` is met with recall 1)."""
    return _top(operand, k, reduction_dimension, aggregate_to_topk, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """`[values, indices]` of the `k` smallest entries along `reduction_dimension`
    (exact; ascending, ties by lower index)."""
    return _top(operand, k, reduction_dimension, aggregate_to_topk, False)
