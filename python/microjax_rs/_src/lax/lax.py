"""`jax._src.lax.lax` at JAX's path: the public `lax` functions plus
`_convert_element_type`, the conversion that also sets the weak type."""
from ...lax import *  # noqa: F401,F403
from ... import core, dtypes as _dt
from ...lax import convert_element_type_p


def _convert_element_type(operand, new_dtype=None, weak_type=False, sharding=None):
    """`operand` converted to `new_dtype` (None: its own dtype) with the weak
    type `weak_type`: `lax.convert_element_type` when `weak_type` is False,
    else a weakly typed result, as the conversion JAX applies to Python
    scalars. `sharding` must be None (one device)."""
    if sharding is not None:
        raise NotImplementedError("_convert_element_type: microjax_rs takes no sharding")
    if not isinstance(operand, (core.ArrayImpl, core.Tracer)):
        operand = core.to_array(operand)
    aval = core.get_aval(operand)
    name = aval.dtype_name if new_dtype is None else _dt.canonical_name(_dt.dtype_name(new_dtype))
    if name == aval.dtype_name and bool(weak_type) == aval.weak_type:
        return operand
    return convert_element_type_p.bind(operand, new_dtype=_dt.np_dtype(name), weak_type=bool(weak_type))
