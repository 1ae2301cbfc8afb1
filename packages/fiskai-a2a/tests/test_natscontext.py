import json
import os
from pathlib import Path

import pytest

from fiskai_a2a import NatsContext, NatsContextError, load_context
from fiskai_a2a.natscontext import DEFAULT_URL, context_dir, selected_context


def _contexts() -> Path:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "nats" / "context"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_context_dir_follows_xdg_config_home() -> None:
    assert context_dir() == Path(os.environ["XDG_CONFIG_HOME"]) / "nats"


def test_a_named_context_is_read_with_its_credentials_and_tls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CREDS_HOME", "/secrets")
    (_contexts() / "ops.json").write_text(
        json.dumps(
            {
                "description": "ops cluster",
                "url": "tls://a:4222, tls://b:4222",
                "user": "alice",
                "password": "s3cret",
                "token": "",
                "creds": "$CREDS_HOME/ops.creds",
                "nkey": "~/ops.nk",
                "cert": "/tls/cert.pem",
                "key": "/tls/key.pem",
                "ca": "/tls/ca.pem",
                "tls_first": True,
                "inbox_prefix": "_INBOX_ops",
                "jetstream_domain": "hub",
                "color_scheme": "",
            }
        ),
        encoding="utf-8",
    )
    context = load_context("ops")
    assert context.servers == ["tls://a:4222", "tls://b:4222"]
    assert (context.user, context.password) == ("alice", "s3cret")
    assert context.creds == "/secrets/ops.creds"
    assert context.nkey == str(Path.home() / "ops.nk")
    assert (context.cert, context.key, context.ca) == ("/tls/cert.pem", "/tls/key.pem", "/tls/ca.pem")
    assert context.tls_first and context.inbox_prefix == "_INBOX_ops"
    assert context.describe() == 'NATS context "ops" (tls://a:4222, tls://b:4222)'


def test_the_selected_context_is_used_when_none_is_named() -> None:
    (_contexts() / "dev.json").write_text(json.dumps({"url": "nats://dev:4222"}), encoding="utf-8")
    assert selected_context() == ""
    assert load_context().url == DEFAULT_URL
    (context_dir() / "context.txt").write_text("dev\n", encoding="utf-8")
    assert selected_context() == "dev"
    assert load_context().url == "nats://dev:4222"


def test_an_absolute_path_is_read_directly(tmp_path: Path) -> None:
    path = tmp_path / "prod.json"
    path.write_text(json.dumps({"url": "nats://prod:4222", "token": "t"}), encoding="utf-8")
    context = load_context(str(path))
    assert context.name == "prod" and context.token == "t" and context.path == str(path)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("missing", None, 'unknown NATS context "missing": no file at'),
        ("../escape", None, 'invalid NATS context name "../escape"'),
        ("broken", "{nope", 'NATS context "broken" at'),
        ("listy", "[1]", "is not a JSON object"),
        ("typed", '{"url": 4}', '"url" must be a string'),
        ("nsc", '{"nsc": "nsc://op/acc/user"}', "uses nsc look-ups"),
        ("socks", '{"socks_proxy": "socks5://p"}', "uses a SOCKS proxy"),
    ],
)
def test_unusable_contexts_are_clear_errors(name: str, content: str | None, expected: str) -> None:
    if content is not None:
        (_contexts() / f"{name}.json").write_text(content, encoding="utf-8")
    with pytest.raises(NatsContextError) as caught:
        load_context(name)
    assert expected in str(caught.value)


def test_a_url_is_an_ad_hoc_context() -> None:
    context = NatsContext.from_url("nats://127.0.0.1:4222")
    assert context.describe() == "nats://127.0.0.1:4222" and context.path == ""
