"""An endpoint that accepts connections on 127.0.0.1 and never answers (a hung LLM, embedding or
encoder service); it counts the connections it holds, so a test can tell how many attempts a
client made without timing anything.

    with HungEndpoint() as hung:
        ... a client pointed at hung.base_url ...
        assert len(hung.held) == 1
"""

from __future__ import annotations

import socket
import threading


class HungEndpoint:
    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.base_url = self.url + "/v1"
        self.held: list[socket.socket] = []
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self._stop = True
        for conn in self.held:
            conn.close()
        self.sock.close()

    def __enter__(self) -> "HungEndpoint":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
