#!/bin/bash
# The GPU checks of a machine with an NVIDIA GPU, from the abi3 wheel built
# here (`make wheel`, copied along with the tree into dist/):
#   1. the device probe with the loader's default search path (the package's
#      own CUDA library search, python/microjax_rs/_src/cuda_libs.py);
#   2. tests/test_cuda.py, tests/test_cuda_fft.py, tests/test_cuda_libs.py
#      and tests/test_devices.py;
#   3. benches/gpu.py (figures for benches/GPU_RESULTS.md);
#   4. the jitted op-table cases on the GPU against eager on the CPU: the
#      complex64/complex128 cases first, then all of them.
# Logs go to $OUT (default /tmp/gpu-check). Needs python3 with numpy, pytest
# and pytest-xdist; PyTorch and JAX are compared when importable.
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
nvidia-smi -L
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/mj-site dist/*.whl || exit 3
export PYTHONPATH=/tmp/mj-site
(cd /tmp && python3 -c "
import microjax_rs as jax
from microjax_rs._src import cuda_libs
print('devices:', jax.devices())
print(cuda_libs.report())") 2>&1 | tee "$OUT/probe.txt"
timeout 150 python3 -m pytest -p no:cacheprovider -q -rsfE -n 4 tests/test_cuda.py tests/test_cuda_fft.py \
    tests/test_cuda_libs.py tests/test_devices.py 2>&1 | tee "$OUT/cuda.txt" | tail -3
timeout 150 python3 benches/gpu.py 2>&1 | tee "$OUT/gpu_bench.txt"
MICROJAX_PLATFORM=gpu timeout -s INT 90 python3 -m pytest -p no:cacheprovider -q -rf --tb=short -n 16 \
    tests/test_op_table.py -k "test_jit_matches_eager and (complex64 or complex128)" > "$OUT/optable_complex.txt" 2>&1
grep -c ^FAILED "$OUT/optable_complex.txt"; tail -2 "$OUT/optable_complex.txt"
MICROJAX_PLATFORM=gpu timeout -s INT 200 python3 -m pytest -p no:cacheprovider -q -rf --tb=short -n 16 \
    tests/test_op_table.py -k test_jit_matches_eager > "$OUT/optable.txt" 2>&1
grep -c ^FAILED "$OUT/optable.txt"; tail -2 "$OUT/optable.txt"
