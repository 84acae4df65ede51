"""The per-process token of a loopback server, for the ``memlane`` command of the same user.

``memlane serve`` on loopback makes a random token, hands it to the application and writes it to
``<home>/server.json`` (owner-only; see ``memlane.hosting.local_server``). The token acts as the admin of the
default tenant, only while this process runs; it is never written to ``keys.db``.
"""

from __future__ import annotations

import hmac

from memlane.hosting.keys import KeyStore, Principal

LOCAL_KEY_ID = "local-cli"


class KeysWithLocalToken:
    """``KeyStore.verify`` that also accepts the server's own local token."""

    def __init__(self, keys: KeyStore, token: str, tenant: str):
        self.keys = keys
        self.token = token
        self.principal = Principal(tenant=tenant, admin=True, key_id=LOCAL_KEY_ID)

    def verify(self, key: str) -> Principal | None:
        if hmac.compare_digest(key.encode("utf-8", "surrogatepass"), self.token.encode()):
            return self.principal
        return self.keys.verify(key)

    def touch(self, used: dict[str, str]) -> None:
        self.keys.touch(used)

    @property
    def CACHE_SECONDS(self) -> float:  # noqa: N802 (the key store's name for it)
        return self.keys.CACHE_SECONDS

    def close(self) -> None:
        self.keys.close()
