"""`lamar.loopback.other_user`: the kernel's owner of a connection's socket, on either loopback, told apart
from the server's own user and root; False wherever it cannot be told."""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import time
from collections.abc import Iterator

import pytest

from lamar.loopback import is_loopback, other_user
from tests.users import OWNER, STRANGER, need_root


@contextlib.contextmanager
def _connection(family: int, host: str, uid: int) -> Iterator[tuple[tuple[str, int], tuple[str, int]]]:
    """(client, server) addresses, as the server sees them, of a connection whose client socket `uid` made."""
    with socket.socket(family, socket.SOCK_STREAM) as server:
        try:
            server.bind((host, 0))
        except OSError as exc:
            pytest.skip(f"cannot bind {host}: {exc}")
        server.listen(4)
        server.settimeout(30)  # a connection that never arrives fails the test instead of holding the suite
        os.seteuid(uid)  # the kernel records who made a socket, not who uses it
        try:
            client = socket.socket(family, socket.SOCK_STREAM)
        finally:
            os.seteuid(0)
        with client:
            client.connect(server.getsockname()[:2])
            accepted, peer = server.accept()
            with accepted:
                yield peer[:2], accepted.getsockname()[:2]


@pytest.mark.parametrize(("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1"),
                                              (socket.AF_INET6, "::ffff:127.0.0.1")])
def test_the_peer_check_tells_users_apart_on_either_loopback(family: int, host: str) -> None:
    need_root()
    if family == socket.AF_INET6 and not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    for uid in (0, OWNER, STRANGER):
        with _connection(family, host, uid) as (peer, local):
            for own in (0, OWNER):  # the check as a server run by root, then by OWNER, makes it
                os.seteuid(own)
                try:
                    refused = other_user(peer, local)
                finally:
                    os.seteuid(0)
                assert refused is (uid not in (own, 0)), (host, uid, own)


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_client_that_hung_up_after_sending_is_told_apart(reset: bool) -> None:
    """The server still reads a request whose sender has closed (or reset) its socket, but the kernel then names
    no owner for that socket (0, as for root) or knows none: such a sender must not pass for root."""
    need_root()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        os.seteuid(STRANGER)
        try:
            client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        finally:
            os.seteuid(0)
        client.connect(server.getsockname())
        accepted, peer = server.accept()
        with accepted:
            client.sendall(b"POST /mcp HTTP/1.1\r\n\r\n")
            if reset:
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
            time.sleep(0.1)  # for the FIN's answer, or the reset, to arrive
            assert accepted.recv(100).startswith(b"POST")  # the request is there to be served
            os.seteuid(OWNER)
            try:
                assert other_user(peer[:2], accepted.getsockname()[:2])
            finally:
                os.seteuid(0)


def _no_netlink(*args: object, **kwargs: object) -> socket.socket:
    raise PermissionError(1, "Operation not permitted")


@pytest.mark.parametrize(("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1"),
                                              (socket.AF_INET6, "::ffff:127.0.0.1")])
def test_where_netlink_is_refused_the_kernels_socket_table_tells_users_apart(
        family: int, host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    need_root()
    if family == socket.AF_INET6 and not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    for uid in (0, OWNER, STRANGER):
        with _connection(family, host, uid) as (peer, local), monkeypatch.context() as patched:
            patched.setattr(socket, "socket", _no_netlink)  # a sandbox that refuses the query (seccomp)
            os.seteuid(OWNER)
            try:
                refused = other_user(peer, local)
            finally:
                os.seteuid(0)
            assert refused is (uid == STRANGER), (host, uid)
            # no socket of that address, and not loopback: a request's own word, or another machine's
            assert not other_user(("203.0.113.7", peer[1]), local)


def test_where_neither_netlink_nor_the_socket_table_can_be_asked_nobody_is_told_apart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    need_root()
    with _connection(socket.AF_INET, "127.0.0.1", STRANGER) as (peer, local):
        assert other_user(peer, local)
        assert not other_user(("203.0.113.7", peer[1]), local)  # no socket of that address: a request's own word
        with monkeypatch.context() as patched:  # a sandbox that refuses the query and hides /proc/net (gVisor)
            patched.setattr(socket, "socket", _no_netlink)
            real_open = open

            def no_proc(path: object, *args: object, **kwargs: object) -> object:
                if str(path).startswith("/proc/net/"):
                    raise PermissionError(1, "Operation not permitted", str(path))
                return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

            patched.setattr("builtins.open", no_proc)
            assert not other_user(peer, local)
        monkeypatch.delattr(socket, "AF_NETLINK")  # not Linux
        assert not other_user(peer, local)


@pytest.mark.parametrize(("host", "local"), [("127.0.0.1", True), ("127.9.8.7", True), ("::1", True), ("[::1]", True),
                                             ("localhost", True), ("::ffff:127.0.0.1", True), ("0.0.0.0", False),
                                             ("::", False), ("192.0.2.1", False), ("::ffff:192.0.2.1", False),
                                             ("example.org", False), ("", False)])
def test_an_address_is_loopback_whichever_server_asks(host: str, local: bool) -> None:
    """One judgement for a bind address (`lamar mcp --host`) and a client's (the peer check): a name, brackets,
    or an IPv4 address written as IPv6."""
    assert is_loopback(host) is local
