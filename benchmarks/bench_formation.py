"""Memory formation benchmark (issue 3).

- Offline ``add(infer=True)``: latency p50/p95/p99 and throughput (messages/s) of a
  one-turn add into a scope that already holds ``--scope-size`` memories, with the
  embedding of the facts and the other stages timed apart.
- LLM engine: chat calls per ``add`` (must be <= 2), counted against the scripted
  OpenAI-compatible server of the test suite (tests/support/openai_server.py).

    python benchmarks/bench_formation.py [--scope-size 10000] [--adds 300] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from memlane import Memory  # noqa: E402
from memlane.embeddings.local import LocalEmbedder  # noqa: E402
from memlane.memory import NewMemory  # noqa: E402

CITIES = ["Lisbon", "Oslo", "Kyoto", "Denver", "Nairobi", "Lima", "Hanoi", "Porto", "Quito", "Tallinn", "Perth", "Cork"]
FOODS = ["ramen", "tacos", "falafel", "paella", "pho", "sushi", "curry", "pierogi", "dumplings", "risotto"]
HOBBIES = ["chess", "pottery", "climbing", "the cello", "salsa", "surfing", "origami", "birdwatching", "rowing"]
PEOPLE = ["sister", "brother", "wife", "husband", "daughter", "son", "friend", "cousin"]
NAMES = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivo", "Jun", "Kofi", "Lena"]
JOBS = ["nurse", "pilot", "teacher", "chef", "architect", "lawyer", "plumber", "designer", "engineer"]


def existing_memories(n: int, rng: random.Random) -> list[str]:
    templates = [
        lambda: f"User visited {rng.choice(CITIES)} in {rng.randint(1990, 2025)}",
        lambda: f"User's {rng.choice(PEOPLE)} {rng.choice(NAMES)} works as a {rng.choice(JOBS)}",
        lambda: f"User ate {rng.choice(FOODS)} with {rng.choice(NAMES)} on trip {rng.randint(1, 999)}",
        lambda: f"User practised {rng.choice(HOBBIES)} for {rng.randint(1, 300)} minutes on day {rng.randint(1, 3650)}",
        lambda: f"User read book number {rng.randint(1, 5000)} about {rng.choice(HOBBIES)}",
    ]
    return [rng.choice(templates)() for _ in range(n)]


def turns(n: int, rng: random.Random) -> list[str]:
    templates = [
        lambda: f"I just got back from {rng.choice(CITIES)} and I loved the {rng.choice(FOODS)} there.",
        lambda: f"My {rng.choice(PEOPLE)} {rng.choice(NAMES)} started working as a {rng.choice(JOBS)}.",
        lambda: f"I'm learning {rng.choice(HOBBIES)} on weekends now.",
        lambda: f"I moved to {rng.choice(CITIES)} last month.",
        lambda: "ok thanks, that's helpful!",
        lambda: f"我最近在学{rng.choice(['吉他', '游泳', '日语', '书法', '围棋'])}，每周{rng.randint(1, 5)}次。",
    ]
    return [rng.choice(templates)() for _ in range(n)]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


def offline(scope_size: int, adds: int, embedder: LocalEmbedder) -> dict:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory({"vector_store": {"provider": "sqlite", "config": {"path": tmp}}}, embedder=embedder)
        started = time.perf_counter()
        texts = existing_memories(scope_size, rng)
        for start in range(0, len(texts), 1000):
            memory.insert([NewMemory(text=t, user_id="bench") for t in texts[start:start + 1000]])
        fill_seconds = time.perf_counter() - started
        messages = turns(adds, rng)
        for warm in messages[:5]:
            memory.add(warm, user_id="warmup")
        latencies, embed_only, extract_only = [], [], []
        events: dict[str, int] = {}
        for text in messages:
            t0 = time.perf_counter()
            result = memory.add(text, user_id="bench")
            latencies.append(time.perf_counter() - t0)
            for r in result["results"] + result["unchanged"]:
                events[r["event"]] = events.get(r["event"], 0) + 1
            t1 = time.perf_counter()
            facts = memory.engine.extract(memory_messages(text), agent_facts=False)
            extract_only.append(time.perf_counter() - t1)
            if facts:
                t2 = time.perf_counter()
                memory.embeddings.documents([f.text for f in facts])
                embed_only.append(time.perf_counter() - t2)
        memory.close()
    return {
        "scope_size": scope_size,
        "fill_seconds": round(fill_seconds, 1),
        "adds": adds,
        "add_ms": {"p50": pct(latencies, 0.5), "p95": pct(latencies, 0.95), "p99": pct(latencies, 0.99)},
        "messages_per_s": round(adds / sum(latencies), 1),
        "extract_only_ms": {"p50": pct(extract_only, 0.5), "p95": pct(extract_only, 0.95)},
        "embed_facts_only_ms": {"p50": pct(embed_only, 0.5), "p95": pct(embed_only, 0.95)},
        "events": events,
    }


def memory_messages(text: str):
    from memlane.models import Message

    return [Message(role="user", content=text)]


def llm_calls(embedder: LocalEmbedder, adds: int) -> dict:
    """Count chat calls per add with a scripted OpenAI-compatible server (no real LLM here)."""
    from support.openai_server import OpenAIServer, Reply, chat_completion

    def reply(request):
        prompt = request.json["messages"][-1]["content"]
        if "Existing memories:" in prompt:
            facts = json.loads(prompt.split("New facts:", 1)[1].split("Answer with", 1)[0])
            body = {"memory": [{"id": str(1000 + i), "text": f, "event": "ADD"} for i, f in enumerate(facts)]}
        else:
            line = prompt.rsplit(":", 1)[-1].strip()
            body = {"facts": [f"Said: {line}", f"Also: {line[::-1]}"]}
        return Reply(json=chat_completion(json.dumps(body)))

    with OpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.route("/v1/chat/completions", reply)
        config = {"vector_store": {"provider": "sqlite", "config": {"path": tmp}},
                  "llm": {"provider": "openai", "config": {"model": "scripted", "api_key": "x", "base_url": server.base_url}}}
        with Memory(config, embedder=embedder) as memory:
            per_add = []
            for i in range(adds):
                before = memory.engine.llm.calls
                memory.add(f"message number {i} about topic {i % 7}", user_id="bench")
                per_add.append(memory.engine.llm.calls - before)
    return {"adds": adds, "max_calls_per_add": max(per_add), "mean_calls_per_add": round(statistics.mean(per_add), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scope-size", type=int, default=10_000)
    parser.add_argument("--adds", type=int, default=300)
    parser.add_argument("--out")
    args = parser.parse_args()
    embedder = LocalEmbedder()
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "offline": offline(args.scope_size, args.adds, embedder),
        "llm": llm_calls(embedder, 20),
    }
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
