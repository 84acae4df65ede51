"""mem0's quickstart question through the official mem0 client against a real memlane server with the
default model: ``search("What do you know about me?", filters={"user_id": "alice"})`` answers with what is
known about Alice, profile first, above the README's threshold (docs/retrieval.md, "Questions about the
user")."""

from __future__ import annotations

import pytest

from support.mem0_client import mem0  # noqa: F401  (fixture)
from support.server_fixtures import serving


@pytest.fixture(scope="module")
def live(tmp_path_factory, e5_embedder):
    with serving(tmp_path_factory.mktemp("server-home"), e5_embedder) as server:
        yield server


def test_what_do_you_know_about_me_through_the_mem0_client(mem0, live):
    client = mem0.MemoryClient(api_key=live.key("about-tenant"), host=live.url)
    client.add([{"role": "user", "content": "Hi, I'm Alice. I live in Porto and I work as a nurse."},
                {"role": "user", "content": "I went to a jazz concert last night."}], user_id="alice")
    client.add("I live in Oslo.", user_id="bob")
    answer = client.search("What do you know about me?", filters={"user_id": "alice"}, threshold=0.2)
    assert [r["memory"] for r in answer["results"]] == ["User is Alice", "User lives in Porto",
                                                       "User works as a nurse",
                                                       "User went to a jazz concert last night"]
    assert [r["score"] for r in answer["results"]][:3] == [1.0, 1.0, 1.0]
    assert answer["metadata"]["query_kind"] == "about_user"
