"""`jax.extend.core`: primitives and the types their rules see."""
from ..core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Primitive, ShapedArray, Var  # noqa: F401
from ..lax._tokens import AbstractToken, Token  # noqa: F401
from ..core import eval_jaxpr, find_top_trace, jaxpr_as_fun, mapped_aval, unmapped_aval  # noqa: F401

__all__ = ["AbstractToken", "ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "Primitive", "ShapedArray", "Token", "Var",
           "eval_jaxpr", "find_top_trace", "jaxpr_as_fun", "mapped_aval", "unmapped_aval"]
