"""Trace modes beyond plain staging: `ad` (grad/jvp/vjp) and `batching` (vmap)."""
