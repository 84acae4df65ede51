#!/usr/bin/env python
"""How long one ``memlane`` command takes, cold (it loads the model itself) and warm (a local
``memlane serve`` is running in the same home, so the command goes to it over HTTP).

In one temporary home, each command runs ``--repeat`` times as a separate process, as a user types
it: first with no server on the default runtime (ONNX Runtime), then with no server on torch
(``--config`` with ``embedder.config.runtime: torch``), then with ``memlane serve`` started (and
stopped at the end). Commands: ``add --no-infer``, ``search`` and ``list``. Before them, one untimed
``add`` is the home's first use: it exports the model to ONNX (``first_use_s``) unless
``$MEMLANE_MODEL_CACHE`` already holds the export. Reported: each command's median wall time in every
mode and the ratios of that run (the machine is shared; ratios from one run are what compare).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_cli.py --out benchmarks/last_cli.json
"""

from __future__ import annotations

import argparse
import json
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


def timed(home: Path, args: list[str], options: list[str] = ()) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memlane.cli", "--home", str(home), *options, *args], check=True,
                   capture_output=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_all(home: Path, repeat: int, options: list[str] = ()) -> dict[str, float]:
    return {name: round(statistics.median(timed(home, args, options) for _ in range(repeat)), 3)
            for name, args in COMMANDS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        first_use = round(timed(home, COMMANDS["add"]), 3)
        cold = run_all(home, options.repeat)
        torch_config = home / "torch.json"
        torch_config.write_text(json.dumps({"embedder": {"provider": "local", "config": {"runtime": "torch"}}}))
        cold_torch = run_all(home, options.repeat, ["--config", str(torch_config)])
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
    write_report({"repeat": options.repeat, "first_use_s": first_use, "cold_s": cold, "cold_torch_s": cold_torch,
                  "warm_s": warm, "cold_over_warm": {k: round(cold[k] / warm[k], 1) for k in cold},
                  "cold_over_cold_torch": {k: round(cold[k] / cold_torch[k], 2) for k in cold},
                  "cpus": os.cpu_count(), "load_avg": os.getloadavg()}, options.out)


if __name__ == "__main__":
    main()
