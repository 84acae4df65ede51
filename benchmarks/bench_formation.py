"""Memory formation benchmark (issue 3).

- Offline ``add(infer=True)``: latency p50/p95/p99 and throughput (messages/s) of a
  one-turn add into a scope that already holds ``--scope-size`` memories, with the
  embedding of the facts and the other stages timed apart.
- LLM engine: chat calls per ``add`` (must be <= 2), counted against the scripted
  OpenAI-compatible server of the test suite (tests/support/openai_server.py).
- ``--compare REV``: the same offline run under the code of git revision REV (checked out into a
  temporary worktree) and under the current code, alternately in subprocesses of one run, so
  the ratio of their latencies is measured on the same machine at the same time.

    python benchmarks/bench_formation.py [--scope-size 10000] [--adds 300] [--out FILE]
    python benchmarks/bench_formation.py --compare REV [--rounds 2] [--scope-size 10000] [--adds 300]
    … [--speaker NAME]: every memory and message is NAME's (labelled vectors, the speaker's candidates)
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
from memlane.core.models import NewMemory  # noqa: E402

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
        # notes as agents write them (MCP add_memory)
        lambda: f"The user's {rng.choice(PEOPLE)} is a {rng.choice(JOBS)} in {rng.choice(CITIES)}",
        lambda: f"Favourite food: {rng.choice(FOODS)}",
    ]
    return [rng.choice(templates)() for _ in range(n)]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


def offline(scope_size: int, adds: int, embedder: LocalEmbedder, speaker: str | None = None) -> dict:
    """``speaker``: the scope's memories and the messages are that named person's (a group chat):
    formation labels their vectors and decides on unlabelled similarities."""
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory({"vector_store": {"provider": "sqlite", "config": {"path": tmp}}}, embedder=embedder)
        started = time.perf_counter()
        texts = existing_memories(scope_size, rng)
        for start in range(0, len(texts), 1000):
            memory.insert([NewMemory(text=t, user_id="bench", actor_id=speaker) for t in texts[start:start + 1000]])
        fill_seconds = time.perf_counter() - started
        messages = turns(adds, rng)
        for warm in messages[:5]:
            memory.add(warm, user_id="warmup")
        latencies, embed_only, extract_only = [], [], []
        events: dict[str, int] = {}
        for text in messages:
            t0 = time.perf_counter()
            result = memory.add([{"role": "user", "name": speaker, "content": text}] if speaker else text,
                                user_id="bench")
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
        "speaker": speaker,
        "fill_seconds": round(fill_seconds, 1),
        "adds": adds,
        "add_ms": {"p50": pct(latencies, 0.5), "p95": pct(latencies, 0.95), "p99": pct(latencies, 0.99)},
        "messages_per_s": round(adds / sum(latencies), 1),
        "extract_only_ms": {"p50": pct(extract_only, 0.5), "p95": pct(extract_only, 0.95)},
        "embed_facts_only_ms": {"p50": pct(embed_only, 0.5), "p95": pct(embed_only, 0.95)},
        "events": events,
    }


def memory_messages(text: str):
    from memlane.core.models import Message

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


def compare(revision: str, rounds: int, scope_size: int, adds: int, speaker: str | None = None) -> dict:
    """Offline add latency under ``revision`` and under the current code, alternating, in one run."""
    import subprocess

    worktree = Path(tempfile.mkdtemp(prefix="memlane-base-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), revision], check=True,
                   capture_output=True)
    sources = {"base": worktree / "src", "current": ROOT / "src"}
    runs: dict[str, list[dict]] = {"base": [], "current": []}
    try:
        for round_number in range(rounds):
            order = ["base", "current"] if round_number % 2 == 0 else ["current", "base"]
            for label in order:
                env = {**os.environ, "PYTHONPATH": str(sources[label])}
                out = subprocess.run([sys.executable, __file__, "--offline-only", "--scope-size", str(scope_size),
                                      "--adds", str(adds), *(["--speaker", speaker] if speaker else [])],
                                     env=env, check=True, capture_output=True, text=True)
                runs[label].append(json.loads(out.stdout))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], capture_output=True)

    def summary(label: str) -> dict:
        p50 = statistics.median(r["add_ms"]["p50"] for r in runs[label])
        p95 = statistics.median(r["add_ms"]["p95"] for r in runs[label])
        return {"add_ms_p50": p50, "add_ms_p95": p95, "runs": runs[label]}

    base, current = summary("base"), summary("current")
    return {"base_revision": revision, "rounds": rounds, "speaker": speaker, "base": base, "current": current,
            "ratio_p50": round(current["add_ms_p50"] / base["add_ms_p50"], 3),
            "ratio_p95": round(current["add_ms_p95"] / base["add_ms_p95"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scope-size", type=int, default=10_000)
    parser.add_argument("--adds", type=int, default=300)
    parser.add_argument("--out")
    parser.add_argument("--compare", metavar="REV", help="A/B: offline add under git revision REV vs the current code")
    parser.add_argument("--rounds", type=int, default=2, help="with --compare: runs of each side, alternating")
    parser.add_argument("--speaker", help="the memories and messages are this named person's")
    parser.add_argument("--offline-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare:
        report = {"date": time.strftime("%Y-%m-%d"), "machine": {"cpus": os.cpu_count(), "load": os.getloadavg()},
                  "compare": compare(args.compare, args.rounds, args.scope_size, args.adds, args.speaker)}
        text = json.dumps(report, indent=2, ensure_ascii=False)
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
        return
    embedder = LocalEmbedder()
    if args.offline_only:
        print(json.dumps(offline(args.scope_size, args.adds, embedder, args.speaker)))
        return
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "offline": offline(args.scope_size, args.adds, embedder, args.speaker),
        "llm": llm_calls(embedder, 20),
    }
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
