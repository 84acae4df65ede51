#!/usr/bin/env python
"""What the stricter durability costs: ``Memory.add(infer=False)`` on SQLite with
``vector_store.config.synchronous`` "normal" (the default: WAL, no flush at commit) against "full" (the
WAL flushed to the disk at every commit; an add is two commits), on the disk of ``--dir``.

Two stores side by side, written in alternating blocks in one run (A B B A A B ..., so the machine's
load and the disk's cache fall on both alike); each add is timed on its own (wall time: a flush waits on
the disk, not the CPU). Reports per setting adds/s, p50/p95/p99 in ms, and the ratios full / normal.
The hashing embedder by default, so the figure is the store's (``--embedder local`` adds the local
model's ~5 ms per add to both sides).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_durability.py --blocks 20 --block-size 50

Prints one JSON object (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MEMORY_TEMPLATES, sentence, summary, write_report  # noqa: E402

from memlane import Memory  # noqa: E402

SETTINGS = ("normal", "full")


def open_memory(directory: Path, synchronous: str, embedder: str) -> Memory:
    config = {"vector_store": {"provider": "sqlite",
                               "config": {"path": str(directory / f"{synchronous}.db"), "synchronous": synchronous}}}
    if embedder == "hashing":
        config["embedder"] = {"provider": "hashing"}
    return Memory(config)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=None, help="where the two stores are made (default: a temporary "
                                                    "directory under the system's temp dir)")
    parser.add_argument("--blocks", type=int, default=20, help="blocks per setting")
    parser.add_argument("--block-size", type=int, default=50, help="adds per block")
    parser.add_argument("--warm-up", type=int, default=20, help="untimed adds per store first")
    parser.add_argument("--embedder", choices=("hashing", "local"), default="hashing")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-durability-") as work:
        directory = Path(work)
        memories = {s: open_memory(directory, s, args.embedder) for s in SETTINGS}
        for setting, memory in memories.items():
            assert memory.info()["durability"] == f"synchronous={setting}"
            for n in range(args.warm_up):
                memory.add(sentence(rng, MEMORY_TEMPLATES) + f" (warm {n})", user_id="u0", infer=False)
        times: dict[str, list[float]] = {s: [] for s in SETTINGS}
        spent = dict.fromkeys(SETTINGS, 0.0)
        for block in range(args.blocks):
            order = SETTINGS if block % 2 == 0 else SETTINGS[::-1]  # A B, B A, A B, ...
            for setting in order:
                memory = memories[setting]
                for n in range(args.block_size):
                    text = sentence(rng, MEMORY_TEMPLATES) + f" (block {block}, add {n})"
                    user = f"u{rng.randrange(20)}"
                    start = time.perf_counter()
                    memory.add(text, user_id=user, infer=False)
                    elapsed = time.perf_counter() - start
                    times[setting].append(1000 * elapsed)
                    spent[setting] += elapsed
        for memory in memories.values():
            memory.close()

    result: dict = {"dir": args.dir or tempfile.gettempdir(), "embedder": args.embedder, "blocks": args.blocks,
                    "block_size": args.block_size, "load_average": [round(x, 2) for x in os.getloadavg()]}
    for setting in SETTINGS:
        result[setting] = {"adds": len(times[setting]), "adds_per_s": round(len(times[setting]) / spent[setting], 1),
                           **{f"{k}_ms": v for k, v in summary(times[setting]).items()}}
    result["full_over_normal"] = {
        "throughput": round(result["full"]["adds_per_s"] / result["normal"]["adds_per_s"], 3),
        "p50": round(result["full"]["p50_ms"] / result["normal"]["p50_ms"], 3),
        "p95": round(result["full"]["p95_ms"] / result["normal"]["p95_ms"], 3),
    }
    write_report(result, args.out)


if __name__ == "__main__":
    main()
