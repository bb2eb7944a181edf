"""A TCP relay to PostgreSQL that the tests cut as a network might: the listener, the accept loop
and the two pipes of each link, with hooks the tests' relays override (`DroppingProxy`...)."""

from __future__ import annotations

import socket
import threading


class Link:
    """One client's connection through the relay: its two sockets, and what happens to the
    server's answers (relayed, dropped with the server side kept open, or cut)."""

    def __init__(self, client: socket.socket, server: socket.socket) -> None:
        self.client, self.server = client, server
        self.half_open = False  # the client hung up on: the server's answers are read and dropped
        self.cut_at_answer = False  # the server's next answer is dropped, and both sides hung up

    def hang_up_on_client(self) -> None:
        """Hang up on the client only: the server keeps the connection, and its backend goes on
        as it was (a half-open link)."""
        self.half_open = True
        close(self.client)


class Relay:
    """Relays each connection to `target` both ways until a side hangs up. While `refusing`, new
    connections are hung up at once (the server unreachable). `close()` stops listening and hangs
    up every link, server sides too.

    Subclasses decide what to do with what a client sends (`forward`): the default sends it on.
    """

    def __init__(self, target: tuple[str, int] = ("127.0.0.1", 5432)) -> None:
        self.target = target
        self.refusing = False
        self.links: list[Link] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def forward(self, link: Link, data: bytes) -> bool:
        """Pass on `data` the client sent; False ends the link's relay of what the client sends
        (closing both sides, unless the link was left half-open)."""
        return send(link.server, data)

    def sever(self) -> None:
        """Hang up on every client and keep the server sides open: the network dropped."""
        for link in self.links:
            link.hang_up_on_client()

    def close(self) -> None:
        self._listener.close()
        close(*(end for link in self.links for end in (link.client, link.server)))

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.refusing:
                close(client)
                continue
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        link = Link(client, socket.create_connection(self.target))
        self.links.append(link)
        threading.Thread(target=self._answers, args=(link,), daemon=True).start()
        while (data := recv(client)) and self.forward(link, data):
            pass
        if not link.half_open:
            close(client, link.server)

    @staticmethod
    def _answers(link: Link) -> None:
        while data := recv(link.server):
            if link.half_open:
                continue
            if link.cut_at_answer or not send(link.client, data):
                break
        close(link.client, link.server)


def recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


def send(sock: socket.socket, data: bytes) -> bool:
    try:
        sock.sendall(data)
        return True
    except OSError:
        return False


def close(*socks: socket.socket) -> None:
    for sock in socks:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
