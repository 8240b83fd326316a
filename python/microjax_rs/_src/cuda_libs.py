"""Finding the CUDA libraries the binding loads (NVRTC and cuBLAS).

The binding opens the CUDA libraries by their names (`libnvrtc.so.13`,
`libcublas.so.13`, ...), which the dynamic loader finds only on its search
path (`LD_LIBRARY_PATH`, `ldconfig`). A CUDA toolkit under
`/usr/local/cuda*`, `$CUDA_PATH`/`$CUDA_HOME`, or NVIDIA's pip packages
(`nvidia-cuda-nvrtc`, `nvidia-cublas`, installed alongside PyTorch or JAX)
is often not on it. Before the first device probe, each library the loader
cannot find by name is looked for in those places and opened by its path
(`RTLD_GLOBAL`), after which opening it by name returns the loaded copy.

The driver (`libcuda.so.1`) is never loaded from a toolkit: its `stubs/`
copy reports no device and its `compat/` copy only works with an older
driver. The probe's outcome, with what was searched, is in `report()`.
"""
import ctypes
import glob
import os
import sys

# In load order: cuBLAS needs cuBLASLt, NVRTC opens its builtins itself.
LIBRARIES = (
    ("cublasLt", "libcublasLt.so.13"),
    ("cublas", "libcublas.so.13"),
    ("nvrtc-builtins", "libnvrtc-builtins.so.13*"),
    ("nvrtc", "libnvrtc.so.13"),
)

_REPORT = []


def candidate_dirs(environ=None, site_dirs=None):
    """Folders that may hold the CUDA 13 libraries, most specific first:
    `$CUDA_PATH`, `$CUDA_HOME`, `$CUDA_ROOT`, NVIDIA's pip packages in
    `site_dirs` (default `sys.path`), then `/usr/local/cuda*` (newest
    version first). Only existing folders are listed, each once."""
    environ = os.environ if environ is None else environ
    site_dirs = sys.path if site_dirs is None else site_dirs
    roots = [environ[v] for v in ("CUDA_PATH", "CUDA_HOME", "CUDA_ROOT") if environ.get(v)]
    dirs = []
    for root in roots:
        dirs += [os.path.join(root, sub) for sub in ("lib64", "lib", "targets/x86_64-linux/lib")]
    for site in site_dirs:
        if site and os.path.isdir(os.path.join(site, "nvidia")):
            dirs += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")))
            dirs += sorted(glob.glob(os.path.join(site, "nvidia", "*", "*", "lib")))
    toolkits = sorted(glob.glob("/usr/local/cuda-*"), key=_version_key, reverse=True)
    for root in ["/usr/local/cuda"] + toolkits:
        dirs += [os.path.join(root, "targets/x86_64-linux/lib"), os.path.join(root, "lib64")]
    out = []
    for d in dirs:
        real = os.path.realpath(d)
        if os.path.isdir(real) and real not in out and not _is_driver_copy(real):
            out.append(real)
    return out


def _version_key(path):
    tail = os.path.basename(path).split("-", 1)[-1]
    return tuple(int(p) if p.isdigit() else -1 for p in tail.split("."))


def _is_driver_copy(path):
    return os.path.basename(path) in ("stubs", "compat")


def find(pattern, dirs):
    """The first file matching `pattern` (a file name, `*` allowed) in
    `dirs`, or None."""
    for d in dirs:
        hits = sorted(glob.glob(os.path.join(d, pattern)))
        if hits:
            return hits[0]
    return None


def _loadable_by_name(pattern):
    if "*" in pattern:
        return False  # the builtins carry their minor version in the name
    try:
        ctypes.CDLL(pattern, mode=ctypes.RTLD_GLOBAL)
        return True
    except OSError:
        return False


def preload(dirs=None):
    """Opens each CUDA library the loader cannot find by name from
    `candidate_dirs()`. Returns (and records for `report()`) one line per
    library: where it came from, or that it was not found."""
    if not sys.platform.startswith("linux"):
        return []
    dirs = candidate_dirs() if dirs is None else dirs
    lines = []
    for short, pattern in LIBRARIES:
        if _loadable_by_name(pattern):
            lines.append(f"{short}: on the loader's search path")
            continue
        path = find(pattern, dirs)
        if path is None:
            lines.append(f"{short}: not found")
            continue
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            lines.append(f"{short}: {path}")
        except OSError as e:
            lines.append(f"{short}: {path} did not load ({e})")
    _REPORT[:] = lines + [f"searched: {', '.join(dirs) or '(no CUDA folder found)'}"]
    return lines


def report():
    """What the last `preload()` found, one line per library, then the
    folders it searched."""
    return "; ".join(_REPORT) if _REPORT else "CUDA libraries not probed"
