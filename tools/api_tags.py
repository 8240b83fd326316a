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
PROGRAM = "owned", "program-level API: config flags, debugging, profiling, export, effects"
TODO = "todo", "numerical surface: not built yet"

_ENTRIES = [
    # ---- complex numbers and FFT
    ("jax.numpy.fft.*", *COMPLEX),
    ("jax.scipy.fft.*", *COMPLEX),
    ("jax.numpy.angle", *COMPLEX), ("jax.numpy.complex64", *COMPLEX), ("jax.numpy.complex128", *COMPLEX),
    ("jax.numpy.complex_", *COMPLEX), ("jax.numpy.csingle", *COMPLEX), ("jax.numpy.cdouble", *COMPLEX),
    ("jax.numpy.roots", *COMPLEX), ("jax.numpy.sort_complex", *COMPLEX), ("jax.numpy.ComplexWarning", *COMPLEX),
    ("jax.lax.complex", *COMPLEX), ("jax.lax.complex_p", *COMPLEX), ("jax.lax.conj", *COMPLEX),
    ("jax.lax.conj_p", *COMPLEX), ("jax.lax.real", *COMPLEX), ("jax.lax.real_p", *COMPLEX),
    ("jax.lax.imag", *COMPLEX), ("jax.lax.imag_p", *COMPLEX), ("jax.lax.fft", *COMPLEX),
    ("jax.lax.fft_p", *COMPLEX), ("jax.lax.FftType", *COMPLEX),
    ("jax.lax.linalg.eig", *COMPLEX), ("jax.lax.linalg.eig_p", *COMPLEX),
    ("jax.lax.linalg.EigImplementation", *COMPLEX), ("jax.lax.linalg.schur", *COMPLEX),
    ("jax.lax.linalg.schur_p", *COMPLEX), ("jax.lax.linalg.hessenberg", *COMPLEX),
    ("jax.lax.linalg.hessenberg_p", *COMPLEX),
    ("jax.scipy.linalg.dft", *COMPLEX), ("jax.scipy.linalg.schur", *COMPLEX),
    ("jax.scipy.linalg.hessenberg", *COMPLEX), ("jax.scipy.linalg.sqrtm", *COMPLEX),
    ("jax.scipy.linalg.funm", *COMPLEX), ("jax.scipy.linalg.rsf2csf", *COMPLEX),
    ("jax.scipy.special.sph_harm_y", *COMPLEX), ("jax.scipy.special.wofz", *COMPLEX),
    ("jax.scipy.signal.fftconvolve", *COMPLEX), ("jax.scipy.signal.stft", *COMPLEX),
    ("jax.scipy.signal.istft", *COMPLEX), ("jax.scipy.signal.welch", *COMPLEX),
    ("jax.scipy.signal.csd", *COMPLEX),
    # ---- scale-out
    ("jax.Shard", *SCALE_OUT), ("jax.shard_map", *SCALE_OUT), ("jax.smap", *SCALE_OUT),
    ("jax.reshard", *SCALE_OUT), ("jax.set_mesh", *SCALE_OUT), ("jax.make_array_from_*", *SCALE_OUT),
    ("jax.process_indices", *SCALE_OUT), ("jax.host_count", *SCALE_OUT), ("jax.host_id", *SCALE_OUT),
    ("jax.host_ids", *SCALE_OUT), ("jax.remove_size_one_mesh_axis_from_type", *SCALE_OUT),
    ("jax.auto_pcast", *SCALE_OUT),
    ("jax.sharding.*", *SCALE_OUT),
    ("jax.Array.addressable_data", *SCALE_OUT), ("jax.Array.addressable_shards", *SCALE_OUT),
    ("jax.Array.global_shards", *SCALE_OUT), ("jax.Array.is_fully_addressable", *SCALE_OUT),
    ("jax.Array.is_fully_replicated", *SCALE_OUT),
    ("jax.debug.inspect_array_sharding", *SCALE_OUT), ("jax.debug.visualize_*", *SCALE_OUT),
    ("jax.lax.psend", *SCALE_OUT), ("jax.lax.precv", *SCALE_OUT), ("jax.lax.pbroadcast", *SCALE_OUT),
    ("jax.lax.pcast", *SCALE_OUT), ("jax.lax.ragged_all_to_all*", *SCALE_OUT),
    ("jax.lax.sharding_constraint_p", *SCALE_OUT), ("jax.lax.with_sharding_constraint", *SCALE_OUT),
    ("jax.lax.device_put_p", *SCALE_OUT),
    # ---- interop
    ("jax.numpy.from_dlpack", *INTEROP), ("jax.Array.unsafe_buffer_pointer", *INTEROP),
    ("jax.Array.copy_to_host_async", *INTEROP), ("jax.copy_to_host_async", *INTEROP),
    # ---- program-level API
    ("jax.allow_f16_reductions", *PROGRAM), ("jax.array_garbage_collection_guard", *PROGRAM),
    ("jax.check_tracer_leaks", *PROGRAM), ("jax.checking_leaks", *PROGRAM),
    ("jax.debug_key_reuse", *PROGRAM), ("jax.enable_checks", *PROGRAM),
    ("jax.explain_cache_misses", *PROGRAM), ("jax.jax2tf_associative_scan_reductions", *PROGRAM),
    ("jax.no_execution", *PROGRAM), ("jax.no_tracing", *PROGRAM),
    ("jax.softmax_custom_jvp", *PROGRAM), ("jax.thread_guard", *PROGRAM),
    ("jax.transfer_guard*", *PROGRAM),
    ("jax.make_user_context", *PROGRAM), ("jax.print_environment_info", *PROGRAM),
    ("jax.live_arrays", *PROGRAM), ("jax.named_call", *PROGRAM), ("jax.fwd_and_bwd", *PROGRAM),
    ("jax.float0", *PROGRAM), ("jax.ds", *PROGRAM),
    ("jax.profiler.*", *PROGRAM), ("jax.debug.*", *PROGRAM), ("jax.export.*", *PROGRAM),
    ("jax.stages.*", *PROGRAM), ("jax.errors.*", *PROGRAM), ("jax.experimental.checkify.*", *PROGRAM),
    ("jax.custom_derivatives.*", *PROGRAM), ("jax.ad_checkpoint.*", *PROGRAM),
    ("jax.Array.committed", *SCALE_OUT),
    ("jax.Array.traceback", *PROGRAM), ("jax.Array.format", *PROGRAM),
    ("jax.lax.after_all*", *PROGRAM), ("jax.lax.create_token*", *PROGRAM),
    ("jax.lax.dce_sink*", *PROGRAM), ("jax.lax.composite", *PROGRAM),
    # ---- exempt
    ("jax.Ref", "exempt", "mutable array references (JAX 0.10.2 marks them experimental): the IR has no "
     "in-place state effect; programs that need state use scan/while carries"),
    ("jax.new_ref", "exempt", "mutable array references (see jax.Ref)"),
    ("jax.empty_ref", "exempt", "mutable array references (see jax.Ref)"),
    ("jax.free_ref", "exempt", "mutable array references (see jax.Ref)"),
    ("jax.freeze", "exempt", "mutable array references (see jax.Ref)"),
    ("jax.numpy.float4_*", "exempt", "sub-byte float dtypes: no core dtype or kernels; not planned"),
    ("jax.numpy.float6_*", "exempt", "sub-byte float dtypes: no core dtype or kernels; not planned"),
    ("jax.numpy.float8_*", "exempt", "8-bit float dtypes: no core dtype or kernels; not planned"),
    ("jax.numpy.int1", "exempt", "sub-byte integer dtypes: no core dtype or kernels; not planned"),
    ("jax.numpy.int2", "exempt", "sub-byte integer dtypes: no core dtype or kernels; not planned"),
    ("jax.numpy.int4", "exempt", "sub-byte integer dtypes: no core dtype or kernels; not planned"),
    ("jax.numpy.uint1", "exempt", "sub-byte integer dtypes: no core dtype or kernels; not planned"),
    ("jax.numpy.uint2", "exempt", "sub-byte integer dtypes: no core dtype or kernels; not planned"),
    ("jax.numpy.uint4", "exempt", "sub-byte integer dtypes: no core dtype or kernels; not planned"),
    ("jax.Array.device_buffer", "exempt", "removed from JAX: the attribute only raises there"),
    ("jax.Array.device_buffers", "exempt", "removed from JAX: the attribute only raises there"),
    ("jax.nn.scaled_matmul", "exempt", "block-scaled matmul on float8/float4 operands (dtypes exempt above) "
     "through cuDNN; JAX 0.10.2 itself raises NotImplementedError on CPU"),
    ("jax.nn.scaled_dot_general", "exempt", "block-scaled dot on float8/float4 operands (see jax.nn.scaled_matmul)"),
    ("jax.nn.get_scaled_dot_general_config", "exempt", "configuration of jax.nn.scaled_dot_general (exempt)"),
    ("jax.lax.scaled_dot", "exempt", "block-scaled dot on float8/float4 operands (see jax.nn.scaled_matmul)"),
    ("jax.experimental.ode.*", "exempt", "helpers of JAX's ode module (imports and private steps), not its "
     "documented API; odeint is the API"),
    # ---- the rest of the numerical surface
    ("jax.*", *TODO),
]


def patterns():
    """[(pattern, (kind, why))], first match wins."""
    return [(p, (kind, why)) for p, kind, why in _ENTRIES]
