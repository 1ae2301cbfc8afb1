"""The listening socket: bound before the banner, so a port in use refuses start-up (no third-party imports)."""

from __future__ import annotations

import socket

__all__ = ["bind", "is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the listener reachable from this machine only."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(listen: str) -> socket.socket:
    """A listening socket on `host:port` (port 0 picks one).

    Raises:
        OSError: the address cannot be bound (in use, not local).
    """
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, int(port)))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock
