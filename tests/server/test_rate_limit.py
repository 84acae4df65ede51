"""Rate and concurrency limits (server/rate_limit.py, docs/rest.md "Limits").

The bucket math and the turns run against the middleware itself, with a fake clock and ASGI calls made
here (no timing); then a real server: one key's burst answered 429 with ``Retry-After`` on REST, MCP and
mem0's client (its ``RateLimitError``) while another tenant's requests all succeed and ``/health`` stays
open.
"""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

from memlane.core import config as config_mod
from memlane.core.config import RateLimitConfig
from memlane.core.errors import ConfigError
from memlane.embeddings.hashing import HashingEmbedder
from memlane.hosting.keys import Principal
from memlane.server import ServerSettings
from memlane.server.middleware import PRINCIPAL, REQUEST_ID
from memlane.server.rate_limit import Limiter, RateLimit
from support.server_fixtures import serving

ALICE_1 = Principal(tenant="acme", key_id="k-alice-1")
ALICE_2 = Principal(tenant="acme", key_id="k-alice-2")
BOB = Principal(tenant="globex", key_id="k-bob")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limits(**settings) -> RateLimitConfig:
    return RateLimitConfig.model_validate({"per_key": None, "per_tenant": None, "concurrency_per_tenant": None,
                                           **settings})


# -- the buckets ------------------------------------------------------------------------------------------

# (per_key bucket, [(time, expected)]): expected is "ok" or (the wait in s, the Retry-After header)
BUCKET_CASES = {
    "burst then the rate": ({"rate": 2, "burst": 2},
                            [(0, "ok"), (0, "ok"), (0, (0.5, "1")), (0.5, "ok"), (0.5, (0.5, "1")), (1.0, "ok")]),
    "a slow rate waits whole seconds": ({"rate": 0.25, "burst": 1},
                                        [(0, "ok"), (0, (4.0, "4")), (1, (3.0, "3")), (3.5, (0.5, "1")), (4, "ok")]),
    "never Retry-After 0": ({"rate": 10, "burst": 1}, [(0, "ok"), (0.05, (0.05, "1")), (0.1, "ok")]),
    "refills no further than the burst": ({"rate": 1, "burst": 2},
                                          [(0, "ok"), (100, "ok"), (100, "ok"), (100, (1.0, "1"))]),
    "a refused request takes no token": ({"rate": 1, "burst": 1},
                                         [(0, "ok"), (0.5, (0.5, "1")), (0.9, (0.1, "1")), (1.0, "ok")]),
}


@pytest.mark.parametrize("bucket,steps", BUCKET_CASES.values(), ids=BUCKET_CASES.keys())
def test_token_bucket(bucket, steps):
    clock = Clock()
    limiter = Limiter(limits(per_key=bucket), clock)
    start = clock.now
    for at, expected in steps:
        clock.now = start + at
        refusal = limiter.admit(ALICE_1)
        if expected == "ok":
            assert refusal is None, (at, refusal)
        else:
            assert refusal is not None and refusal.limit == "per_key", at
            assert (round(refusal.retry_after, 6), refusal.retry_after_header) == expected


# (the limits, [(who, expected limit or "ok")]), all at one instant
WHO_CASES = {
    "each key its own bucket": ({"per_key": {"rate": 0.001, "burst": 2}},
                                [(ALICE_1, "ok"), (ALICE_1, "ok"), (ALICE_1, "per_key"), (ALICE_2, "ok"),
                                 (BOB, "ok"), (BOB, "ok"), (BOB, "per_key")]),
    "a tenant's keys share its bucket": ({"per_tenant": {"rate": 0.001, "burst": 3}},
                                         [(ALICE_1, "ok"), (ALICE_2, "ok"), (ALICE_1, "ok"), (ALICE_2, "per_tenant"),
                                          (ALICE_1, "per_tenant"), (BOB, "ok")]),
    "both: the empty one is named, the other keeps its tokens": (
        {"per_key": {"rate": 0.001, "burst": 2}, "per_tenant": {"rate": 0.001, "burst": 3}},
        [(ALICE_1, "ok"), (ALICE_1, "ok"), (ALICE_1, "per_key"), (ALICE_2, "ok"), (ALICE_2, "per_tenant"),
         (BOB, "ok")]),
    "a key without an id (no-auth) counts as its tenant's": (
        {"per_key": {"rate": 0.001, "burst": 1}},
        [(Principal(tenant="default", admin=True), "ok"), (Principal(tenant="default", admin=True), "per_key"),
         (ALICE_1, "ok")]),
}


@pytest.mark.parametrize("settings,steps", WHO_CASES.values(), ids=WHO_CASES.keys())
def test_per_key_and_per_tenant(settings, steps):
    limiter = Limiter(limits(**settings), Clock())
    seen = [(who.key_id, (r := limiter.admit(who)) and r.limit or "ok") for who, _ in steps]
    assert seen == [(who.key_id, expected) for who, expected in steps]


@pytest.mark.parametrize("settings,problem", [
    ({"per_key": {"rate": 0, "burst": 1}}, "config.server.rate_limit.per_key.rate"),
    ({"per_tenant": {"rate": 5}}, "config.server.rate_limit.per_tenant.burst"),
    ({"concurrency_per_tenant": 0}, "config.server.rate_limit.concurrency_per_tenant"),
    ({"per_minute": 5}, "config.server.rate_limit.per_minute"),
])
def test_a_wrong_limit_is_named(settings, problem):
    with pytest.raises(ConfigError, match=problem.replace(".", r"\.")):
        config_mod.load({"server": {"rate_limit": settings}})


# -- the middleware, called as ASGI ---------------------------------------------------------------------


def scope_of(who: Principal | None, path: str = "/search", method: str = "POST") -> dict:
    scope = {"type": "http", "method": method, "path": path, "headers": [], REQUEST_ID: f"req-{path}"}
    if who is not None:
        scope[PRINCIPAL] = who
    return scope


async def call(app, scope) -> tuple[int, dict, bytes]:
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    headers = {k.decode(): v.decode() for k, v in start.get("headers", [])}
    return start["status"], headers, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


async def ok_app(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def test_429_names_the_limit_with_retry_after_and_the_request_id():
    clock = Clock()
    app = RateLimit(ok_app, limits(per_key={"rate": 0.5, "burst": 1}), clock)

    async def run():
        assert (await call(app, scope_of(ALICE_1)))[0] == 200
        clock.now += 0.5
        status, headers, body = await call(app, scope_of(ALICE_1))
        assert status == 429 and headers["retry-after"] == "2" and headers["content-type"] == "application/json"
        answer = json.loads(body)
        assert answer["limit"] == "per_key" and answer["retry_after"] == 1.5 and answer["request_id"] == "req-/search"
        assert "API key k-alice-1" in answer["detail"] and "0.5 requests/s" in answer["detail"]
        # a public path (no principal: /health, the dashboard's assets) is never limited
        for _ in range(5):
            assert (await call(app, scope_of(None, "/health", "GET")))[0] == 200

    anyio.run(run)


class Gate:
    """An inner app whose requests wait until the test lets them go, one way or another."""

    def __init__(self) -> None:
        self.entered: list[str] = []
        self.release: dict[str, anyio.Event] = {}
        self.outcome: dict[str, str] = {}

    async def __call__(self, scope, receive, send):
        name = scope["path"]
        self.entered.append(name)
        self.release[name] = anyio.Event()
        if self.outcome.get(name) == "stream":  # the first chunk goes out before the wait
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"first", "more_body": True})
            await self.release[name].wait()
            await send({"type": "http.response.body", "body": b"last"})
            return
        await self.release[name].wait()
        if self.outcome.get(name) == "error":
            raise RuntimeError("boom")
        await ok_app(scope, receive, send)


async def until(condition) -> None:
    while not condition():
        await anyio.sleep(0)


# how the request holding the only turn ends: the turn comes back each way
@pytest.mark.parametrize("ending", ["answered", "error", "cancelled", "stream"])
def test_a_tenant_beyond_its_turns_waits_then_is_refused(ending):
    gate = Gate()
    app = RateLimit(gate, limits(concurrency_per_tenant=1, queue_per_tenant=1), Clock())
    statuses: dict[str, int] = {}
    cancel: dict[str, anyio.CancelScope] = {}

    async def request(name: str, who: Principal = ALICE_1) -> None:
        with anyio.CancelScope() as cancel[name]:
            try:
                statuses[name] = (await call(app, scope_of(who, name)))[0]
            except RuntimeError:
                statuses[name] = 500

    async def run():
        async with anyio.create_task_group() as tasks:
            gate.outcome["/first"] = {"answered": "ok", "error": "error", "stream": "stream"}.get(ending, "ok")
            tasks.start_soon(request, "/first")
            await until(lambda: "/first" in gate.entered)
            tasks.start_soon(request, "/second", ALICE_2)  # same tenant: waits for the turn
            await until(lambda: app.limiter.turns["acme"].statistics().tasks_waiting == 1)
            assert (await call(app, scope_of(ALICE_1, "/third")))[0] == 429  # the queue is full
            tasks.start_soon(request, "/bob", BOB)  # another tenant: its own turn, at once
            await until(lambda: "/bob" in gate.entered)
            gate.release["/bob"].set()
            assert gate.entered == ["/first", "/bob"]  # /second still waits behind its tenant's turn
            if ending == "cancelled":
                cancel["/first"].cancel()
            else:
                gate.release["/first"].set()
            await until(lambda: "/second" in gate.entered)
            gate.release["/second"].set()
        assert app.limiter.turns["acme"].value == 1 and app.limiter.turns["globex"].value == 1
        assert statuses["/second"] == 200 and statuses["/bob"] == 200
        assert statuses.get("/first") == {"answered": 200, "error": 500, "cancelled": None, "stream": 200}[ending]

    anyio.run(run)


def test_the_429_of_a_full_queue_names_concurrency():
    gate = Gate()
    app = RateLimit(gate, limits(concurrency_per_tenant=1, queue_per_tenant=0), Clock())

    async def run():
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call, app, scope_of(ALICE_1, "/first"))
            await until(lambda: "/first" in gate.entered)
            status, headers, body = await call(app, scope_of(ALICE_2, "/second"))
            gate.release["/first"].set()
        assert status == 429 and headers["retry-after"] == "1"
        answer = json.loads(body)
        assert answer["limit"] == "concurrency" and "tenant 'acme'" in answer["detail"]

    anyio.run(run)


def test_a_waiting_request_cancelled_leaves_no_trace():
    gate = Gate()
    app = RateLimit(gate, limits(concurrency_per_tenant=1, queue_per_tenant=1), Clock())

    async def run():
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call, app, scope_of(ALICE_1, "/first"))
            await until(lambda: "/first" in gate.entered)
            waiting = anyio.CancelScope()

            async def gone():
                with waiting:
                    await call(app, scope_of(ALICE_1, "/gone"))

            tasks.start_soon(gone)
            await until(lambda: app.limiter.turns["acme"].statistics().tasks_waiting == 1)
            waiting.cancel()  # the client went away while it waited
            await until(lambda: app.limiter.turns["acme"].statistics().tasks_waiting == 0)
            gate.release["/first"].set()
        assert gate.entered == ["/first"] and app.limiter.turns["acme"].value == 1

    anyio.run(run)


def test_mcp_event_stream_holds_no_turn():
    gate = Gate()
    app = RateLimit(gate, limits(concurrency_per_tenant=1, queue_per_tenant=0), Clock())

    async def run():
        async with anyio.create_task_group() as tasks:
            gate.outcome["/mcp"] = "stream"
            tasks.start_soon(call, app, scope_of(ALICE_1, "/mcp", "GET"))  # open as long as the MCP session
            await until(lambda: "/mcp" in gate.entered)
            tasks.start_soon(call, app, scope_of(ALICE_1, "/search"))
            await until(lambda: "/search" in gate.entered)  # not refused: the stream took no turn
            gate.release["/search"].set()
            gate.release["/mcp"].set()

    anyio.run(run)


# -- a real server ------------------------------------------------------------------------------------------

TIGHT = {"server": {"rate_limit": {"per_key": {"rate": 0.001, "burst": 6}, "per_tenant": None}}}


@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("rate-limit-home"), HashingEmbedder(), config=TIGHT) as live:
        yield live


def test_one_keys_burst_is_refused_while_another_tenant_is_served(tight, mem0):
    flood, quiet = tight.key("flood"), tight.key("quiet")
    client = mem0.MemoryClient(api_key=flood, host=tight.url)  # its construction spends some of the burst
    with tight.client(flood) as api, tight.client(quiet) as other, httpx.Client(base_url=tight.url) as public:
        answers, served = [], []
        for n in range(12):
            answers.append(api.post("/search", json={"query": "q", "user_id": "u"}))
            if n % 2:
                served.append(other.post("/search", json={"query": "q", "user_id": "u"}).status_code)
        statuses = [a.status_code for a in answers]
        assert 200 in statuses and statuses[statuses.index(429):] == [429] * (12 - statuses.index(429))
        for answer in answers[statuses.index(429):]:
            body = answer.json()
            assert int(answer.headers["retry-after"]) >= 900 and body["limit"] == "per_key"
            assert body["request_id"] == answer.headers["x-request-id"] and "rate limit" in body["detail"]
        assert served == [200] * 6  # the other tenant: every request answered
        assert all(public.get("/health").status_code == 200 for _ in range(10))
        mcp = api.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                       headers={"accept": "application/json, text/event-stream"})
        assert mcp.status_code == 429 and mcp.json()["limit"] == "per_key"
    with pytest.raises(mem0.exceptions.RateLimitError) as raised:
        client.search("anything", filters={"user_id": "u"})
    assert raised.value.debug_info["retry_after"] >= 900 and "rate limit" in raised.value.message


@pytest.mark.parametrize("how", [{"rate_limit": False},
                                 {"config": {"server": {"rate_limit": {**TIGHT["server"]["rate_limit"],
                                                                       "enabled": False}}}}])
def test_limits_switched_off(tmp_path, how):
    settings = {"config": TIGHT, **how}
    with serving(tmp_path, HashingEmbedder(), **settings) as live:
        with live.client(live.key("flood")) as api:
            assert {api.get("/memories", params={"user_id": "u"}).status_code for _ in range(10)} == {200}


def test_no_rate_limit_reaches_worker_processes(tmp_path, monkeypatch):
    for name, value in ServerSettings(home=tmp_path, rate_limit=False).to_env().items():
        monkeypatch.setenv(name, value)
    assert ServerSettings.from_env().rate_limit is False
    monkeypatch.delenv("MEMLANE_SERVER_NO_RATE_LIMIT")
    assert ServerSettings.from_env().rate_limit is True

