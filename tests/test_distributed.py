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


def _run(nproc, *argv, timeout=240, check=True):
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
    # Every collective first checks that all processes run the same one.
    env["MICROJAX_COLLECTIVE_CHECKS"] = "1"
    p = subprocess.run(cmd + [sys.executable, *argv], capture_output=True, text=True, env=env,
                       timeout=timeout, cwd=ROOT)
    if not check:
        return p
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr[-4000:]}"
    return p.stdout


@pytest.mark.parametrize("nproc,local,platform", [(2, 1, "cpu"), (4, 1, "cpu"), (2, 2, "cpu"),
                                                  (2, 1, "gpu")],
                         ids=["2-processes", "4-processes", "2-processes-2-devices-each",
                              "2-processes-stand-in-gpus"])
def test_collectives_between_processes(nproc, local, platform):
    # "gpu": each process's programs run on its stand-in GPU (tests/fake_gpu.py);
    # the collectives between processes then take the host route, as on GPUs
    # without NCCL.
    out = _run(nproc, os.path.join(ROOT, "tests", "mpi_collectives_worker.py"), str(nproc), str(local),
               platform)
    # The processes' lines may interleave on the shared stdout.
    assert sorted(int(r) for r in re.findall(r"ok (\d+)", out)) == list(range(nproc))


@pytest.mark.parametrize("nproc", [2, 4])
def test_data_parallel_example_matches_one_process(nproc):
    out = _run(nproc, os.path.join(ROOT, "examples", "data_parallel.py"), "--check", "--steps", "10")
    report = json.loads(out.strip().splitlines()[-1])
    assert report["processes"] == nproc and report["devices"] == nproc
    assert report["ok"] and report["max_abs_diff"] < 1e-5 and report["grad_max_abs_diff"] < 1e-5
    assert report["last_loss"] < report["first_loss"]


def test_runs_repeat_bit_for_bit():
    """Sums between processes are added in process order: two runs of the
    same training give the same parameter bits."""
    script = os.path.join(ROOT, "examples", "data_parallel.py")
    a = json.loads(_run(2, script, "--steps", "5").strip().splitlines()[-1])
    b = json.loads(_run(2, script, "--steps", "5").strip().splitlines()[-1])
    assert a["params_sha256"] == b["params_sha256"]


@pytest.mark.parametrize("death", ["raise RuntimeError('this process failed')", "os._exit(3)"],
                         ids=["uncaught-exception", "exit-without-finalize"])
def test_a_dying_process_ends_the_run(death):
    """A process that fails while the others wait in a collective: the run
    stops with an error (an uncaught exception aborts it; the launcher reports
    a process that vanished), it does not hang."""
    code = (
        "import os, numpy as np, microjax_rs as jax\n"
        "from microjax_rs.sharding import Mesh, PartitionSpec as P\n"
        "jax.distributed.initialize()\n"
        "if jax.process_index() == 1:\n"
        f"    {death}\n"
        "mesh = Mesh(np.array(jax.devices()), ('x',))\n"
        "jax.shard_map(lambda a: jax.lax.psum(a, 'x'), mesh=mesh, in_specs=P('x'), out_specs=P())(\n"
        "    np.ones(2, np.float32))\n")
    p = _run(2, "-c", code, timeout=120, check=False)
    assert p.returncode != 0
    if "raise" in death:
        assert "this process failed" in p.stderr


def test_cluster_detection_from_launcher_environments(monkeypatch):
    from microjax_rs._src import distributed
    for var in distributed._LAUNCHER_SIZE_VARS + distributed._LAUNCHER_RANK_VARS:
        monkeypatch.delenv(var, raising=False)
    assert distributed.detect_cluster() == (None, None, None)
    monkeypatch.setenv("SLURM_NTASKS", "8")
    monkeypatch.setenv("SLURM_PROCID", "5")
    assert distributed.detect_cluster() == (8, 5, "SLURM_NTASKS")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "2")
    assert distributed.detect_cluster() == (4, 2, "OMPI_COMM_WORLD_SIZE")
