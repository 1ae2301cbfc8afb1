import socket
from urllib.parse import urlparse


def test_nats_server_fixture_accepts_connections(nats_server: str) -> None:
    url = urlparse(nats_server)
    assert url.hostname == "127.0.0.1"
    assert url.port is not None
    with socket.create_connection((url.hostname, url.port), timeout=5) as conn:
        greeting = conn.recv(4096)
    assert greeting.startswith(b"INFO ")
    assert b'"jetstream":true' in greeting
