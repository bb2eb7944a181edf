"""`other_user`: whether a TCP connection to one of Lamar's local servers (`lamar ui`, `lamar mcp --transport
http`) comes from a process of another user of this machine, who reaches every loopback port as its owner does;
`is_loopback`: whether an address names this machine alone."""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import struct

# Linux's sock_diag netlink query for one TCP socket by its four addresses: it finds that socket
# alone, where reading /proc/net/tcp lists every socket of the machine (milliseconds per request),
# which is read only where netlink is refused.
_SOCK_DIAG, _BY_FAMILY, _REQUEST, _ANY_COOKIE, _ERROR = 4, 20, 1, 0xFFFFFFFF, 2
_UID_AT = 16 + 4 + 48 + 12  # netlink header, family/state/timer/retrans, the socket's id, expires/queues


def other_user(client: tuple[str, int] | None, server: tuple[str, int] | None) -> bool:
    """Whether the kernel says the socket at `client`, connected to `server`, belongs to a user other than this
    process's own and root.

    `client` and `server` are the connection's own addresses, as uvicorn gives them with `proxy_headers=False`:
    an address the request names itself (`X-Forwarded-For`) finds no socket here, and would be let in. Where
    netlink is refused (a seccomp filter), /proc/net/tcp is read instead. False wherever the owner cannot be
    told (not Linux, a sandbox without netlink or /proc/net, a client on another machine): the server's other
    guards alone hold there. True for a client that has closed its socket (or reset it, on
    loopback): the kernel keeps no owner for it, and a client that waits for the answer never does that.

    >>> other_user(None, ("127.0.0.1", 8765))
    False
    """
    if client is None or server is None or not hasattr(socket, "AF_NETLINK") or not hasattr(os, "geteuid"):
        return False
    # an IPv6 socket is asked for as one, else the kernel finds none and the check would let it in
    family = socket.AF_INET6 if ":" in client[0] else socket.AF_INET
    try:
        src, dst = (socket.inet_pton(family, host).ljust(16, b"\0") for host in (client[0], server[0]))
    except (OSError, ValueError):  # an address of neither family
        return False
    try:
        sockid = struct.pack("!HH", client[1], server[1]) + src + dst + struct.pack("=III", 0, _ANY_COOKIE, _ANY_COOKIE)
        body = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF) + sockid
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _SOCK_DIAG) as diag:
            diag.settimeout(1)
            diag.sendto(struct.pack("=IHHII", 16 + len(body), _BY_FAMILY, _REQUEST, 1, 0) + body, (0, 0))
            answer = diag.recv(65536)
    except (OSError, struct.error):  # no such query here (a sandbox refusing netlink): the kernel's table, then
        owner = _listed_owner(family, client, server)
        return owner is not None and _stranger(owner[0], owner[1], client[0])
    if len(answer) < _UID_AT + 8 or struct.unpack_from("=H", answer, 4)[0] != _BY_FAMILY:
        # An error message: no such socket (see `_stranger`).
        gone = (len(answer) >= 20 and struct.unpack_from("=H", answer, 4)[0] == _ERROR
                and struct.unpack_from("=i", answer, 16)[0] == -errno.ENOENT)
        return gone and is_loopback(client[0])
    uid, inode = struct.unpack_from("=II", answer, _UID_AT)
    return _stranger(uid, inode, client[0])


def _stranger(uid: int | None, inode: int, client: str) -> bool:
    """Whether the client socket the kernel described (`uid` None: it holds none) is another user's."""
    if uid is None:
        # No such socket on loopback: it was this machine's and its client reset it (a sender that wants no
        # answer, whose owner is then lost); elsewhere it may be another machine's.
        return is_loopback(client)
    # No process holds it: closed after sending. The kernel names no owner for a closed socket (it says 0, as
    # for root), so a user who sent a request and hung up would pass for root.
    if inode == 0:
        return True
    # root is let in: it can read this process's token and store anyway, and port relays run as root
    return uid not in (os.geteuid(), 0)


def _listed_owner(family: int, client: tuple[str, int], server: tuple[str, int]) -> tuple[int | None, int] | None:
    """(uid, inode) of the client's socket in /proc/net/tcp or tcp6, (None, 0) when neither lists it, None when
    neither can be read: where netlink is refused, the kernel's table of every socket still names its owner."""
    def row(fam: int, host: str, port: int) -> str:  # as the table writes an address: native-endian words
        raw = socket.inet_pton(fam, host)
        return "".join(f"{word:08X}" for word in struct.unpack(f"={len(raw) // 4}I", raw)) + f":{port:04X}"

    tables = [("/proc/net/tcp6", socket.AF_INET6, client[0], server[0])] if family == socket.AF_INET6 else []
    mapped = [ipaddress.ip_address(h.strip("[]")) for h in (client[0], server[0])]
    four = [getattr(a, "ipv4_mapped", None) or a for a in mapped]
    if all(a.version == 4 for a in four):  # a dual-stack server shows an IPv4 client's socket as IPv6
        tables.append(("/proc/net/tcp", socket.AF_INET, str(four[0]), str(four[1])))
    read = False
    for where, fam, near, far in tables:
        wanted = (row(fam, near, client[1]), row(fam, far, server[1]))
        try:
            with open(where, "rb") as table:  # bytes: a server run as a user who cannot load a codec reads it too
                lines = table.read().decode().splitlines()[1:]
        except OSError:
            continue
        read = True
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and (fields[1], fields[2]) == wanted:
                return int(fields[7]), int(fields[9])
    return (None, 0) if read else None


def is_loopback(host: str) -> bool:
    """Whether `host` reaches this machine alone: `localhost`, 127.0.0.0/8 or `::1`, in brackets or not.

    One server's bind address and another's client address are judged alike: an IPv4 address written as IPv6
    (`::ffff:127.0.0.1`, as a dual-stack socket shows an IPv4 client) counts as the IPv4 address it carries.

    >>> [is_loopback(h) for h in ("127.0.0.2", "[::1]", "localhost", "::ffff:127.0.0.1", "0.0.0.0", "example.org")]
    [True, True, True, True, False, False]
    """
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


__all__ = ["is_loopback", "other_user"]
