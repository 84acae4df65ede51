#!/usr/bin/env python
"""How long one ``memlane`` command takes, as a user types it: ``--help``; cold (it loads the model
itself); warm (a local ``memlane serve`` is running in the same home, so the command goes to it over HTTP).

In one temporary home, each command runs ``--repeat`` times as a separate process: ``--help``; then
``add --no-infer``, ``search`` and ``list`` with no server on the default runtime (ONNX Runtime), then
on torch (``embedder.config.runtime: torch``; ``--no-torch`` skips it), then with ``memlane serve``
started (and stopped at the end). Before them, one untimed ``add`` is the home's first use: it exports
the model to ONNX (``first_use_s``) unless the model cache already holds the export. Reported: each
command's median wall time in every mode and the ratios of that run (the machine is shared; ratios from
one run are what compare), its median CPU time (``*_cpu_s``: the command's own process, not the server's;
close to the wall time a quiet machine shows) and the load average before and after.

``--baseline-src DIR`` (a ``src`` directory of another version, e.g. ``git archive <commit> src | tar
-x -C /tmp/before``) measures ``--help``, the cold commands and the warm ones A/B: each repetition runs
the baseline's command and this checkout's, alternating which goes first, so drift of the machine hits
both alike; the server is this checkout's. Reported with ``current_over_baseline`` per command.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_cli.py --out benchmarks/last_cli.json
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_cli.py --baseline-src /tmp/before/src --no-torch --repeat 7
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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

SRC = Path(__file__).resolve().parents[1] / "src"
COMMANDS = {
    "add": ["add", "I keep bees on the roof", "--user", "alice", "--no-infer", "--json"],
    "search": ["search", "what hobby does she have?", "--user", "alice", "--json"],
    "list": ["list", "--user", "alice", "--json"],
}
HELP = ["--help"]


def timed(home: Path, args: list[str], options: list[str] = (), src: Path = SRC) -> tuple[float, float]:
    """One ``memlane`` process running the code of ``src``: its wall time and its CPU time (user + system)
    in seconds. On a busy machine the wall time grows with the load; the CPU time much less, and it is
    about what the wall time is on a quiet one (the command runs on one core and waits for nothing but,
    when warm, the server's answer)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(src), "COLUMNS": "80"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memlane.cli", "--home", str(home), *options, *args], check=True,
                   capture_output=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_all(home: Path, repeat: int, options: list[str] = (), commands: dict[str, list[str]] = COMMANDS,
            sources: dict[str, Path] | None = None, cpu: dict | None = None) -> dict[str, dict[str, float]]:
    """Median wall seconds of each command for each version (``sources``: name -> src directory), the
    versions alternating within every repetition (and which goes first alternating between repetitions);
    the median CPU seconds likewise into ``cpu`` when given."""
    sources = sources or {"current": SRC}
    times: dict[str, dict[str, list[tuple[float, float]]]] = {v: {c: [] for c in commands} for v in sources}
    names = list(sources)
    for n in range(repeat):
        for name, args in commands.items():
            for version in (names if n % 2 == 0 else names[::-1]):
                times[version][name].append(timed(home, args, options, sources[version]))
    if cpu is not None:
        cpu.update({v: {c: round(statistics.median(t[1] for t in ts), 3) for c, ts in per.items()}
                    for v, per in times.items()})
    return {v: {c: round(statistics.median(t[0] for t in ts), 3) for c, ts in per.items()} for v, per in times.items()}


def ratios(report: dict[str, dict[str, float]]) -> dict[str, float]:
    if "baseline" not in report:
        return {}
    return {c: round(report["current"][c] / report["baseline"][c], 2) for c in report["current"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-src", type=Path, help="a src directory of another version, measured A/B")
    parser.add_argument("--no-torch", action="store_true", help="skip the cold runs on torch")
    parser.add_argument("--out")
    options = parser.parse_args()
    sources = {"current": SRC}
    if options.baseline_src is not None:
        sources["baseline"] = options.baseline_src.resolve()
    report: dict = {"repeat": options.repeat, "sources": {k: str(v) for k, v in sources.items()},
                    "load_avg_before": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        report["first_use_s"] = round(timed(home, COMMANDS["add"])[0], 3)
        report["help_cpu_s"], report["cold_cpu_s"], report["warm_cpu_s"] = {}, {}, {}
        report["help_s"] = run_all(home, options.repeat, commands={"help": HELP}, sources=sources,
                                   cpu=report["help_cpu_s"])
        report["cold_s"] = run_all(home, options.repeat, sources=sources, cpu=report["cold_cpu_s"])
        if not options.no_torch:
            torch_config = home / "torch.json"
            torch_config.write_text(json.dumps({"embedder": {"provider": "local", "config": {"runtime": "torch"}}}))
            report["cold_torch_s"] = run_all(home, options.repeat, ["--config", str(torch_config)])
        server = subprocess.Popen([sys.executable, "-m", "memlane.cli", "--home", str(home), "serve", "--port",
                                   str(free_port()), "--log-level", "warning"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL,
                                  env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(SRC)})
        try:
            while local_server.read(home) is None:
                if server.poll() is not None:
                    raise SystemExit("memlane serve exited")
                time.sleep(0.2)
            report["warm_s"] = run_all(home, options.repeat, sources=sources, cpu=report["warm_cpu_s"])
        finally:
            server.terminate()
            server.wait(timeout=60)
    current = report["cold_s"]["current"]
    report["cold_over_warm"] = {k: round(current[k] / report["warm_s"]["current"][k], 1) for k in current}
    if "cold_torch_s" in report:
        report["cold_over_cold_torch"] = {k: round(current[k] / report["cold_torch_s"]["current"][k], 2)
                                          for k in current}
    report["current_over_baseline"] = {mode: ratios(report[mode]) for mode in ("help_s", "cold_s", "warm_s")
                                       if "baseline" in report[mode]}
    report.update(cpus=os.cpu_count(), load_avg=[round(x, 2) for x in os.getloadavg()])
    write_report(report, options.out)


if __name__ == "__main__":
    main()
