"""`jax._src.compiler` at JAX's path: the step that readies a traced program
for a backend.

`jit` calls `backend_compile_and_load(backend, closed_jaxpr)` (looked up on
this module at call time, so it can be wrapped, as `chex.restrict_backends`
does) once per new trace it will run at top level; the Rust executor builds
the program's plan when it first runs, so this step returns the program
itself."""


def backend_compile_and_load(backend, program, *args, **kwargs):
    """Ready `program` (a ClosedJaxpr) for `backend` (an object with `platform`)."""
    return program


__all__ = ["backend_compile_and_load"]
