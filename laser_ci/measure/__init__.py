"""What a job's machine uses while it runs: CPU cores, memory, disk, disk and network bytes.

:mod:`laser_ci.measure.sampler` samples a Linux machine through ``/proc``;
:mod:`laser_ci.measure.record` is the usage record (the JSON the Action's ``measure`` step
also writes, read back by ``collect`` and the history fetch);
:mod:`laser_ci.measure.command` is ``laser-ci measure -- COMMAND``.
"""
