"""A real ``memlane serve`` process on 127.0.0.1 (free port) with its own home, for end-to-end tests.

    with ServeProcess(home, config={"enable_graph": True}) as server:
        key = server.create_key("acme", admin=True)
        httpx.get(server.url + "/health")
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from support.live_server import free_port

MEMLANE = [sys.executable, "-m", "memlane.cli"]


class ServeProcess:
    def __init__(self, home: Path, *, config: dict | None = None, startup_timeout: float = 300.0,
                 serve_args: list[str] | None = None, env: dict[str, str] | None = None):
        """``serve_args``: options after ``serve`` (``["--config", FILE]``); ``env``: variables added to the
        process's environment."""
        self.home = Path(home)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "MEMLANE_HOME": str(self.home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    **(env or {})}
        self.serve_args = list(serve_args or [])
        self.options: list[str] = []
        if config is not None:
            path = self.home / "config.json"
            path.write_text(json.dumps(config))
            self.options = ["--config", str(path)]
        self.startup_timeout = startup_timeout
        self.log = self.home / "serve.log"
        self.process: subprocess.Popen | None = None

    def create_key(self, tenant: str, *, admin: bool = False) -> str:
        """``memlane keys create --tenant T [--admin] --json`` in this server's home."""
        args = [*MEMLANE, *self.options, "keys", "create", "--tenant", tenant, "--json", *(["--admin"] if admin else [])]
        done = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=120, check=True)
        return json.loads(done.stdout)["key"]

    def __enter__(self) -> "ServeProcess":
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([*MEMLANE, *self.options, "serve", *self.serve_args, "--port", str(self.port),
                                             "--log-level", "warning"], env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"memlane serve exited ({self.process.returncode}):\n{self.log.read_text()}")
            try:
                if httpx.get(self.url + "/health", timeout=5).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"memlane serve did not answer in time:\n{self.log.read_text()}")
            time.sleep(0.2)

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
