"""mem0's JavaScript ``MemoryClient`` (npm ``mem0ai``, installed in tests/js by ``make js-client``) against a live
memlane server for the project's settings, webhooks, feedback and exports: tests/js/mem0_project_client.js
calls each method and checks its answer (the delivery itself is tested in test_webhooks.py). Skipped, saying
why, without node or the installed package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.server_fixtures import serving

JS = Path(__file__).resolve().parents[1] / "js"
METHODS = ["updateProject", "getProject", "createWebhook", "getWebhooks", "updateWebhook", "feedback",
           "createMemoryExport", "getMemoryExport", "deleteWebhook"]


@pytest.fixture(scope="module")
def node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: mem0's JavaScript client cannot run")
    if not (JS / "node_modules" / "mem0ai" / "package.json").exists():
        pytest.skip("mem0ai is not installed in tests/js (make js-client)")
    return node


def test_the_javascript_clients_project_methods(node, tmp_path):
    from memlane.embeddings.hashing import HashingEmbedder

    tenant = "js-project"
    with serving(tmp_path / "home", HashingEmbedder()) as live:
        env = {**os.environ, "MEMLANE_URL": live.url, "MEMLANE_TENANT": tenant,
               "MEMLANE_ADMIN_KEY": live.key(tenant, admin=True), "HOOK_URL": "http://127.0.0.1:9/hook",
               "MEM0_TELEMETRY": "false", "MEM0_DIR": str(tmp_path / "mem0"), "HOME": str(tmp_path)}
        done = subprocess.run([node, str(JS / "mem0_project_client.js")], cwd=JS, env=env, capture_output=True,
                              text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["checked"] == METHODS
