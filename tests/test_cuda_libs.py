"""Where the package looks for the CUDA libraries before the device probe
(`microjax_rs/_src/cuda_libs.py`). The folder search runs everywhere; what
loads depends on the machine, so loading is checked through the report."""
import os

import pytest

import microjax_rs as jax
from microjax_rs._src import cuda_libs

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent


def touch(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").close()
    return path


def test_candidate_dirs_order_env_then_pip_packages(tmp_path):
    cuda = tmp_path / "toolkit"
    site = tmp_path / "site"
    for d in (cuda / "lib64", cuda / "targets/x86_64-linux/lib", site / "nvidia/cu13/lib",
              site / "nvidia/cublas/lib", cuda / "lib64/stubs"):
        os.makedirs(d)
    dirs = cuda_libs.candidate_dirs({"CUDA_HOME": str(cuda)}, [str(site), ""])
    ours = [d for d in dirs if d.startswith(str(tmp_path))]
    assert ours == [str(cuda / "lib64"), str(cuda / "targets/x86_64-linux/lib"),
                    str(site / "nvidia/cu13/lib"), str(site / "nvidia/cublas/lib")]
    # Missing folders are left out; each folder appears once.
    assert len(dirs) == len(set(dirs))
    assert all(os.path.isdir(d) for d in dirs)


def test_driver_stubs_and_compat_copies_are_never_searched(tmp_path):
    for sub in ("stubs", "compat"):
        os.makedirs(tmp_path / sub)
    dirs = cuda_libs.candidate_dirs({"CUDA_PATH": str(tmp_path / "stubs"),
                                     "CUDA_ROOT": str(tmp_path / "compat")}, [])
    assert not any(d.startswith(str(tmp_path)) for d in dirs)
    assert not any(os.path.basename(d) in ("stubs", "compat") for d in dirs)


def test_find_takes_the_first_folder_and_globs_versions(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    want = touch(str(b / "libnvrtc-builtins.so.13.0"))
    touch(str(a / "libnvrtc.so.13"))
    touch(str(b / "libnvrtc.so.13"))
    assert cuda_libs.find("libnvrtc.so.13", [str(a), str(b)]) == str(a / "libnvrtc.so.13")
    assert cuda_libs.find("libnvrtc-builtins.so.13*", [str(a), str(b)]) == want
    assert cuda_libs.find("libcublas.so.13", [str(a), str(b)]) is None


def test_preload_reports_every_library_and_a_file_that_is_not_a_library(tmp_path):
    touch(str(tmp_path / "libcublasLt.so.13"))  # empty: not a shared object
    lines = cuda_libs.preload([str(tmp_path)])
    assert [ln.split(":")[0] for ln in lines] == [short for short, _ in cuda_libs.LIBRARIES]
    lt = lines[0]
    assert lt == "cublasLt: on the loader's search path" or "did not load" in lt
    assert f"searched: {tmp_path}" in cuda_libs.report()


@pytest.mark.skipif(jax._devices.gpu_count() > 0, reason="checks the no-GPU message")
def test_missing_gpu_error_says_what_was_searched(monkeypatch):
    monkeypatch.setenv("MICROJAX_PLATFORM", "gpu")
    with pytest.raises(RuntimeError, match="CUDA libraries: .*nvrtc"):
        jax.devices()
