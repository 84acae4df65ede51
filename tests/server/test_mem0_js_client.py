"""mem0's JavaScript ``MemoryClient`` (npm ``mem0ai``, the version pinned in tests/js/package-lock.json)
against a live memlane server: tests/js/mem0_client.js calls every method memlane serves and checks each
answer. Needs node and npm; the package is installed by ``make install`` (``make js-client``), or here
when missing and the npm registry answers. Without them the test is skipped and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.server_fixtures import live  # noqa: F401  (fixture)

JS = Path(__file__).resolve().parents[1] / "js"
VERSION = json.loads((JS / "package.json").read_text(encoding="utf-8"))["dependencies"]["mem0ai"]

#: the JavaScript client's methods memlane serves (docs/mem0.md), in the order mem0_client.js checks them;
#: project, webhooks, feedback and exports are tested with their feature (docs/webhooks.md)
METHODS = ["ping", "add", "get", "getAll", "search", "update", "history", "batchUpdate", "batchDelete", "delete",
           "deleteAll", "getProfile", "generateProfile", "getProfileJob", "getProfileSettings",
           "updateProfileSettings", "sampleProfiles", "users", "deleteUser", "deleteUsers"]


@pytest.fixture(scope="module")
def node() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        pytest.skip("node is not installed: mem0's JavaScript client cannot run")
    installed = JS / "node_modules" / "mem0ai" / "package.json"
    if not installed.exists():
        if npm is None:
            pytest.skip("npm is not installed: mem0ai cannot be installed (make js-client)")
        done = subprocess.run([npm, "ci", "--prefix", str(JS), "--silent"], capture_output=True, text=True,
                              timeout=600)
        if done.returncode != 0:
            pytest.skip(f"could not install mem0ai@{VERSION} from the npm registry: {done.stderr.strip()[-300:]}")
    assert json.loads(installed.read_text(encoding="utf-8"))["version"] == VERSION
    return node


def test_every_method_of_the_javascript_client(node, live, tmp_path):
    tenant = "js-tenant"
    env = {**os.environ, "MEMLANE_URL": live.url, "MEMLANE_TENANT": tenant, "MEMLANE_KEY": live.key(tenant),
           "MEMLANE_ADMIN_KEY": live.key(tenant, admin=True),
           # no telemetry (read when the module loads), its config file and HOME in the test's directory
           "MEM0_TELEMETRY": "false", "MEM0_DIR": str(tmp_path / "mem0"), "HOME": str(tmp_path)}
    done = subprocess.run([node, str(JS / "mem0_client.js")], cwd=JS, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["checked"] == METHODS
