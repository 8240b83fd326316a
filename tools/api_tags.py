"""Tags for the JAX names microjax_rs lacks (read by tools/api_coverage.py).

Each entry is (pattern, kind, why): `pattern` is an fnmatch pattern over full JAX
names ("jax.numpy.fft.*"); `kind` is
  "owned"  - another open piece of work builds it (named by its subject);
  "exempt" - decided not to build, with the reason;
  "todo"   - part of the numerical surface, not built yet.
The first matching entry wins. tests/test_api_coverage.py fails on a missing
name without a tag and on an entry that matches only names that exist.
"""

COMPLEX = "owned", "complex numbers and FFT"
SCALE_OUT = "owned", "scale-out: multi-process, sharded arrays, shard_map"
INTEROP = "owned", "interop: DLPack, FFI, foreign buffers"

def _tagged(tag, *patterns):
    """The entries (pattern, kind, why) of `patterns`, all with `tag` = (kind, why)."""
    return [(p, *tag) for p in patterns]


def _exempt(why):
    return "exempt", why


_ENTRIES = [
    # ---- complex numbers and FFT
    *_tagged(COMPLEX,
        "jax.numpy.ComplexWarning",
        "jax.scipy.linalg.dft", "jax.scipy.special.sph_harm_y",
        "jax.scipy.special.wofz",
    ),
    # ---- scale-out
    *_tagged(SCALE_OUT,
        "jax.smap", "jax.reshard", "jax.make_array_from_*",
        "jax.host_count", "jax.host_id", "jax.host_ids",
        "jax.remove_size_one_mesh_axis_from_type", "jax.auto_pcast", "jax.sharding.*",
        "jax.lax.psend", "jax.lax.precv", "jax.lax.pbroadcast", "jax.lax.pcast", "jax.lax.ragged_all_to_all*",
        "jax.lax.sharding_constraint_p", "jax.lax.device_put_p",
        "jax.Array.committed",
    ),
    # ---- interop
    *_tagged(INTEROP,
        "jax.Array.unsafe_buffer_pointer", "jax.Array.copy_to_host_async",
        "jax.copy_to_host_async",
    ),
    # ---- exempt
    *_tagged(_exempt("mutable array references (JAX 0.10.2 marks them experimental): the IR has no in-place "
                     "state effect; programs that need state use scan/while carries"), "jax.Ref"),
    *_tagged(_exempt("mutable array references (see jax.Ref)"),
             "jax.new_ref", "jax.empty_ref", "jax.free_ref", "jax.freeze"),
    *_tagged(_exempt("removed from JAX: the attribute only raises there"),
             "jax.Array.device_buffer", "jax.Array.device_buffers"),
    *_tagged(_exempt("block-scaled matmul on float8/float4 operands (dtypes exempt above) through cuDNN; "
                     "JAX 0.10.2 itself raises NotImplementedError on CPU"), "jax.nn.scaled_matmul"),
    *_tagged(_exempt("block-scaled dot on float8/float4 operands (see jax.nn.scaled_matmul)"),
             "jax.nn.scaled_dot_general", "jax.lax.scaled_dot"),
    *_tagged(_exempt("configuration of jax.nn.scaled_dot_general (exempt)"), "jax.nn.get_scaled_dot_general_config"),
    *_tagged(_exempt("helpers of JAX's ode module (imports and private steps), not its documented API; odeint "
                     "is the API"), "jax.experimental.ode.*"),
]


def patterns():
    """[(pattern, (kind, why))], first match wins."""
    return [(p, (kind, why)) for p, kind, why in _ENTRIES]
