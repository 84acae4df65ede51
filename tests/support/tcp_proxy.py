"""A TCP proxy on loopback in front of a PostgreSQL server, which a test can take down (every
connection cut, new ones refused) and bring back on the same port: a network failure or a
server restart as the client sees it."""

from __future__ import annotations

import socket
import threading

from psycopg.conninfo import conninfo_to_dict, make_conninfo


class TcpProxy:
    def __init__(self, url: str):
        params = conninfo_to_dict(url)
        host, port = params.get("host") or "localhost", int(params.get("port") or 5432)
        self._target = (socket.AF_UNIX, f"{host}/.s.PGSQL.{port}") if host.startswith("/") else (
            socket.AF_INET, (host, port))
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.port = 0
        self.up()
        self.url = make_conninfo(url, host="127.0.0.1", port=self.port)

    def up(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        """Refuse new connections and cut every open one."""
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._open = self._open, []
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked on it (Linux) and frees the port
            except OSError:
                pass
            listener.close()
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.down()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by down()
            family, address = self._target
            server = socket.socket(family, socket.SOCK_STREAM)
            try:
                server.connect(address)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    server.close()
                    return
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
