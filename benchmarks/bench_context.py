"""Agent context benchmark (issue 8, part A): the gate's precision / recall on the labelled
sets, and the latency of ``search_memory_with_context`` against plain ``search`` at scale.

Fills one scope (one user, talking to one agent) with ``--size`` memories: varied
templated sentences (they feed the keyword index and the term matcher), half facts and
half events, with random unit vectors (they cost what real ones cost to store and score).
Each of ``--queries`` distinct three-turn conversations is searched both ways, the modes
interleaved so machine load hits them alike: plain ``search`` of the last user turn
(limit 10), hybrid ``search`` (``keyword_search=True``), and ``search_memory_with_context``
(``max_results=10``), each once cold (the query embedded by the real local model) and
once warm (the query's vector cached: store work and scoring only).

    python benchmarks/bench_context.py [--size 10000] [--queries 200] [--out FILE] [--gate-only]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from memlane import Memory
from memlane.core import validation  # noqa: E402
from memlane.core.config import ContextConfig  # noqa: E402
from memlane.embeddings.local import LocalEmbedder  # noqa: E402
from memlane.core.models import MemoryRecord  # noqa: E402
from memlane.retrieval import context  # noqa: E402
from memlane.store import ChangeSet  # noqa: E402
from memlane.core.timeutil import now_iso  # noqa: E402
from common import sentence, summary, unit_vectors, write_report  # noqa: E402

TEMPLATES = [
    "Spent the weekend {s} with their {p} near {l}",
    "Their {p} thinks {s} is the best way to relax",
    "Booked a trip to {l} to try {s} in spring",
    "Has been practising {s} every morning since moving to {l}",
    "Got a book about {s} from their {p} for a birthday",
]
TURNS = [
    ("I was talking to my {p} about {s} yesterday.", "That sounds fun! What did they say?",
     "Do you remember when I went to {l}? What did we plan there?"),
    ("Thinking about a trip to {l}.", "Nice, any plans?", "What did my {p} say about {s} last time?"),
    ("I need a birthday idea for my {p}.", "Sure, what do they enjoy?", "You know they love {s}, right?"),
]


def fill(memory: Memory, size: int, rng: random.Random) -> float:
    nprng = np.random.default_rng(7)
    started = time.perf_counter()
    now = now_iso()
    for start in range(0, size, 5000):
        count = min(5000, size - start)
        vectors = unit_vectors(nprng, count)
        records = [MemoryRecord(id=str(uuid.uuid4()), text=sentence(rng, TEMPLATES), hash="",
                                created_at=now, updated_at=now, user_id="u", agent_id="tutor",
                                memory_type="event" if i % 2 else "fact", vector=vectors[i])
                   for i in range(count)]
        memory.store.apply(ChangeSet(inserts=records))
    return time.perf_counter() - started


def gate_figures() -> dict[str, dict[str, dict[str, float]]]:
    """Precision / recall of each gate (``seed``, the default, and ``tuned``) on the labelled sets in tests/data."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for gate in ("seed", "tuned"):
        settings = ContextConfig(gate=gate)
        out[gate] = {}
        for name in ("should_search.jsonl", "should_search_holdout.jsonl"):
            rows = [json.loads(line) for line in (ROOT / "tests" / "data" / name).read_text().splitlines() if line]
            tp = fp = fn = 0
            for row in rows:
                turns = validation.messages(row["conversation"], validation.Limits(), "conversation")
                said = context.decide(turns, row.get("system_prompt", ""), settings).should_search
                tp += said and row["should_search"]
                fp += said and not row["should_search"]
                fn += (not said) and row["should_search"]
            out[gate][name] = {"conversations": len(rows), "precision": round(tp / max(tp + fp, 1), 3),
                               "recall": round(tp / max(tp + fn, 1), 3)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--gate-only", action="store_true", help="only the gates' precision / recall (no model)")
    args = parser.parse_args()
    if args.gate_only:
        print(json.dumps({"gate": gate_figures()}, indent=2))
        return
    rng = random.Random(11)
    report: dict = {"size": args.size, "queries": args.queries, "python": platform.python_version(),
                    "gate": gate_figures()}
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory({"vector_store": {"provider": "sqlite", "config": {"path": f"{tmp}/bench.db"}},
                         "query_cache_size": 4 * args.queries + 16}, embedder=LocalEmbedder())
        report["fill_s"] = round(fill(memory, args.size, rng), 2)
        conversations = []
        for i in range(args.queries):
            user1, assistant, user2 = (sentence(rng, [t]) for t in rng.choice(TURNS))
            conversations.append([{"role": "user", "content": f"{user1} (#{i})"},
                                  {"role": "assistant", "content": assistant},
                                  {"role": "user", "content": f"{user2} (#{i})"}])
        modes = {
            "search": lambda c: memory.search(c[-1]["content"], user_id="u", limit=10),
            "search_hybrid": lambda c: memory.search(c[-1]["content"], user_id="u", limit=10, keyword_search=True),
            "context_user": lambda c: memory.search_memory_with_context(c, user_id="u", max_results=10),
            "context_user_agent": lambda c: memory.search_memory_with_context(c, user_id="u", agent_id="tutor",
                                                                              max_results=10),
        }
        for warm_up in conversations[:3]:  # load the model, the FTS index pages and the segmenter
            for run in modes.values():
                run(warm_up)
        times: dict[str, list[float]] = {f"{m}_{t}": [] for m in modes for t in ("cold", "warm")}
        matches = []
        for conversation in conversations[3:]:
            for name in rng.sample(list(modes), len(modes)):
                for temperature in ("cold", "warm"):
                    started = time.perf_counter()
                    result = modes[name](conversation)
                    times[f"{name}_{temperature}"].append((time.perf_counter() - started) * 1000)
                    if name == "context_user" and temperature == "warm":
                        matches.append(result["total_matches"])
        report["ms"] = {name: summary(values) for name, values in times.items()}
        report["context_matches_mean"] = round(sum(matches) / len(matches), 1)
        for base, variant in (("search", "context_user"), ("search_hybrid", "context_user"),
                              ("search", "context_user_agent")):
            for temperature in ("cold", "warm"):
                b, v = report["ms"][f"{base}_{temperature}"], report["ms"][f"{variant}_{temperature}"]
                report.setdefault("ratios", {})[f"{variant}/{base} {temperature}"] = {
                    q: round(v[q] / b[q], 2) for q in ("p50", "p95")}
        memory.close()
    try:
        report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    write_report(report, args.out)


if __name__ == "__main__":
    main()
