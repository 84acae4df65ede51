#!/usr/bin/env python
"""How long one ``memlane`` command takes, cold (it loads the model itself) and warm (a local
``memlane serve`` is running in the same home, so the command goes to it over HTTP).

In one temporary home, each command runs ``--repeat`` times as a separate process, as a user types
it: first with no server, then with ``memlane serve`` started (and stopped at the end). Commands:
``add --no-infer``, ``search`` and ``list``. Reported: each command's median wall time in both modes
and the cold/warm ratio of that run (the machine is shared; ratios from one run are what compare).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_cli.py --out benchmarks/last_cli.json
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import write_report  # noqa: E402

from memlane.hosting import local_server  # noqa: E402

COMMANDS = {
    "add": ["add", "I keep bees on the roof", "--user", "alice", "--no-infer", "--json"],
    "search": ["search", "what hobby does she have?", "--user", "alice", "--json"],
    "list": ["list", "--user", "alice", "--json"],
}


def timed(home: Path, args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memlane.cli", "--home", str(home), *args], check=True,
                   capture_output=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_all(home: Path, repeat: int) -> dict[str, float]:
    return {name: round(statistics.median(timed(home, args) for _ in range(repeat)), 3)
            for name, args in COMMANDS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        cold = run_all(home, options.repeat)
        server = subprocess.Popen([sys.executable, "-m", "memlane.cli", "--home", str(home), "serve", "--port",
                                   str(free_port()), "--log-level", "warning"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        try:
            while local_server.read(home) is None:
                if server.poll() is not None:
                    raise SystemExit("memlane serve exited")
                time.sleep(0.2)
            warm = run_all(home, options.repeat)
        finally:
            server.terminate()
            server.wait(timeout=60)
    write_report({"repeat": options.repeat, "cold_s": cold, "warm_s": warm,
                  "cold_over_warm": {k: round(cold[k] / warm[k], 1) for k in cold},
                  "cpus": os.cpu_count(), "load_avg": os.getloadavg()}, options.out)


if __name__ == "__main__":
    main()
