"""What a conversation added turn by turn costs with its context (issue 31): one ``add(infer=False)`` of
one message per call, speakers alternating, in a scope that already holds 200 messages; with and without
reading the turns stored before it (``Formation.earlier_turns``), in alternating blocks; and the read alone.

    python benchmarks/bench_turn_context.py [--adds 100] [--block 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memlane import Memory  # noqa: E402
from memlane.core.arguments import AddCall  # noqa: E402
from memlane.core.models import Message  # noqa: E402
from memlane.ingest.formation import Formation  # noqa: E402
from common import pct  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--adds", type=int, default=100, help="adds a side")
    parser.add_argument("--block", type=int, default=20)
    args = parser.parse_args()
    real = Formation.earlier_turns
    with tempfile.TemporaryDirectory() as tmp, Memory({"vector_store": {"provider": "sqlite",
                                                                        "config": {"path": tmp + "/m.db"}}}) as m:
        m.add([{"role": "user", "name": "AB"[i % 2], "content": f"warm up message {i}"} for i in range(200)],
              user_id="u", infer=False)
        times: dict[str, list[float]] = {"with": [], "without": []}
        n = 0
        for block in range(2 * args.adds // args.block):
            side = ("with", "without")[(block + block // 2) % 2]
            Formation.earlier_turns = real if side == "with" else (lambda self, *a: [])
            for _ in range(args.block):
                n += 1
                started = time.perf_counter()
                m.add([{"role": "user", "name": "AB"[n % 2], "content": f"I went hiking on trail number {n} today"}],
                      user_id="u", infer=False)
                times[side].append((time.perf_counter() - started) * 1000)
        Formation.earlier_turns = real
        formation = next(v for v in vars(m).values() if isinstance(v, Formation))
        call = AddCall(ids={"user_id": "u"}, messages=[Message(role="user", content="x", name="A")], metadata={},
                       promoted={}, infer=False, memory_type=None, expires=None)
        started = time.perf_counter()
        for _ in range(500):
            formation.earlier_turns(call, ["none"], "2099-01-01T00:00:00+00:00")
        read_ms = (time.perf_counter() - started) / 500 * 1000
    for side, values in times.items():
        print(f"{side:8} p50 {pct(values, 0.5):.2f} ms  p95 {pct(values, 0.95):.2f} ms")
    print(f"the read alone {read_ms:.3f} ms; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
