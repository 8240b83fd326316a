"""`jax.distributed`: start, inspect and stop a multi-process run.

microjax_rs runs one process per launcher rank: start the program with an MPI
launcher (`mpirun -np 4 python train.py`, `srun` under Slurm) and call
`initialize()` first. Collectives between processes (`psum`, `all_gather`, ...
over `shard_map` mesh axes that span processes) go through MPI via mpi4py,
which is only needed for runs of more than one process. See
docs/DISTRIBUTED.md."""
from ._src import distributed as _d

__all__ = ["initialize", "shutdown", "is_initialized"]


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, cluster_detection_method=None, initialization_timeout=300,
               coordinator_bind_address=None, **kwargs):
    """Joins this process to the run its launcher started.

    The process count and this process's index come from the launcher's
    environment (Open MPI's ``OMPI_COMM_WORLD_*``, MPICH/PMI's ``PMI_*``,
    Slurm's ``SLURM_*``) and MPI's world communicator; ``num_processes`` and
    ``process_id``, when given, must agree with them (``ValueError``).
    ``coordinator_address`` is accepted and unused: MPI's launcher is the
    coordinator. Outside a launcher only a one-process run can start
    (``RuntimeError`` otherwise). Calling it twice raises ``RuntimeError``.

    >>> import microjax_rs as jax
    >>> jax.distributed.initialize()  # doctest: +SKIP
    >>> jax.process_index(), jax.process_count()  # doctest: +SKIP
    (0, 1)
    """
    _d.initialize(coordinator_address, num_processes, process_id, local_device_ids,
                  cluster_detection_method, initialization_timeout, coordinator_bind_address,
                  **kwargs)


def shutdown():
    """Leaves the run (waits for every process at a barrier); a no-op when not
    initialized. ``jax.process_count()`` is 1 again afterwards."""
    _d.shutdown()


def is_initialized():
    """Whether `initialize` has been called (and `shutdown` not since)."""
    return _d.is_initialized()
