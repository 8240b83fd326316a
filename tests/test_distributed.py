"""Multi-process runs under an MPI launcher (`mpirun`, 2 and 4 processes on
loopback): collectives between processes against NumPy
(tests/mpi_collectives_worker.py) and examples/data_parallel.py against
training on the whole batch in one process. Skipped, with the reason, where no
launcher or no mpi4py is installed (.ci/run installs Open MPI from Debian's
packages; mpi4py is pinned in requirements-dev.txt)."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.device_independent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPIRUN = shutil.which("mpirun") or shutil.which("mpiexec")


def _launcher_or_skip():
    if MPIRUN is None:
        pytest.skip("no MPI launcher (mpirun/mpiexec) on PATH: install Open MPI "
                    "(Debian: openmpi-bin) to run the multi-process tests")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (requirements-dev.txt pins it)")


def _run(nproc, *argv, timeout=240):
    _launcher_or_skip()
    cmd = [MPIRUN, "-np", str(nproc)]
    if "Open MPI" in subprocess.run([MPIRUN, "--version"], capture_output=True, text=True).stdout:
        # CI runs as root on 2 cores.
        cmd += ["--allow-run-as-root", "--oversubscribe"]
    env = dict(os.environ)
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    # One rayon thread per process: the processes share this machine's cores.
    env["RAYON_NUM_THREADS"] = "1"
    env.pop("MICROJAX_FAKE_GPU", None)
    p = subprocess.run(cmd + [sys.executable, *argv], capture_output=True, text=True, env=env,
                       timeout=timeout, cwd=ROOT)
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr[-4000:]}"
    return p.stdout


@pytest.mark.parametrize("nproc", [2, 4])
def test_collectives_between_processes(nproc):
    out = _run(nproc, os.path.join(ROOT, "tests", "mpi_collectives_worker.py"), str(nproc))
    # The processes' lines may interleave on the shared stdout.
    assert sorted(int(r) for r in re.findall(r"ok (\d+)", out)) == list(range(nproc))


@pytest.mark.parametrize("nproc", [2, 4])
def test_data_parallel_example_matches_one_process(nproc):
    out = _run(nproc, os.path.join(ROOT, "examples", "data_parallel.py"), "--check", "--steps", "10")
    report = json.loads(out.strip().splitlines()[-1])
    assert report["processes"] == nproc and report["devices"] == nproc
    assert report["ok"] and report["max_abs_diff"] < 1e-5 and report["grad_max_abs_diff"] < 1e-5
    assert report["last_loss"] < report["first_loss"]
