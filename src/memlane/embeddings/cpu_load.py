"""Whether the machine's cores are busy: the test a model runtime makes before letting its threads spin.

Threads that spin between a run's operators save the wake-up of a sleeping thread when a core is idle;
when every core is wanted they hold a core the scheduler would give to other work and wait for each
other: multilingual-e5-small's search text, two threads on two cores at a load average of 23, took 64 ms
p50 spinning and 25 ms not (quiet, spinning saves a fifth: 8.3–9.0 ms instead of 10.2–11.7).
"""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        return os.cpu_count() or 1


def cores_busy() -> bool:
    """Whether the machine's one-minute load average (runnable threads, this process's included) fills
    every core this process may use. Where the load average cannot be read: False."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return False
    return load >= usable_cores()
