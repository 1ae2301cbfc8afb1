"""The scrubbed tool environment, as a mapping and as a real child process sees it."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import anyio
import pytest

from fiskai_core.exec import DEFAULT_STRIPPED_ENV, DEFAULT_STRIPPED_PREFIXES, HARNESS_CREDENTIAL_PREFIXES, tool_env
from fiskai_core.exec.running import run_argv

pytestmark = pytest.mark.anyio

FISK_AI_NAMES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_WEBHOOK_SIGNING_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
)
SDK_2X_NAMES = (
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
    "ANTHROPIC_BASE_URL",
)


# Issue 9.4.11: before, only 11 exact ANTHROPIC_* names were stripped; these reached every tool.
WELL_KNOWN = (
    "OPENAI_API_KEY",
    "OPENAI_ORG_ID",
    "AZURE_OPENAI_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GOOGLE_API_KEY",
    "AZURE_CLIENT_SECRET",
    "HF_TOKEN",
    "NATS_CREDS",
)
HARNESS_OWN = (*FISK_AI_NAMES, *SDK_2X_NAMES, "ANTHROPIC_ANYTHING_NEW", "CLAUDE_CODE_OAUTH_TOKEN")
SECRETS = (*HARNESS_OWN, *WELL_KNOWN)
KEPT = {"PATH": "/bin", "HOME": "/home/x", "XDG_CONFIG_HOME": "/c", "AWS_REGION": "eu-west-1", "NATS_URL": "nats://x"}


def test_the_default_list_has_no_duplicates_and_covers_the_well_known_names() -> None:
    assert len(DEFAULT_STRIPPED_ENV) == len(set(DEFAULT_STRIPPED_ENV))
    assert "ANTHROPIC_" in HARNESS_CREDENTIAL_PREFIXES
    assert "OPENAI_" in DEFAULT_STRIPPED_PREFIXES


def test_every_credential_is_removed_and_everything_else_kept() -> None:
    env = tool_env(dict.fromkeys(SECRETS, "secret") | KEPT)
    assert env == KEPT | {"LLMFORMAT": "1"}


def test_names_are_compared_exactly() -> None:
    base = {"anthropic_api_key": "lower", "GH_TOKEN_OLD": "longer", " GITHUB_TOKEN": "spaced", "XANTHROPIC_KEY": "x"}
    assert tool_env(base) == base | {"LLMFORMAT": "1"}


def test_operator_named_variables_and_prefixes_are_removed_too() -> None:
    base = {"EMBED_KEY": "secret", "embed_key": "kept", "MYCORP_A": "s", "MYCORP_B": "s", "MYCORPX": "kept"}
    env = tool_env(base, strip=["EMBED_KEY", "MYCORP_*", "", "*"])
    assert env == {"embed_key": "kept", "MYCORPX": "kept", "LLMFORMAT": "1"}


def test_pass_lets_a_default_name_through_but_never_the_harness_own_or_an_operator_strip() -> None:
    base = {"GH_TOKEN": "for gh", "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "EMBED_KEY": "k"}
    env = tool_env(
        base, strip=["EMBED_KEY"], passthrough=["GH_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "EMBED_KEY"]
    )
    assert env == {"GH_TOKEN": "for gh", "OPENAI_API_KEY": "k", "LLMFORMAT": "1"}


def test_llmformat_is_forced_to_1_and_comes_last() -> None:
    env = tool_env({"LLMFORMAT": "0", "A": "1"})
    assert list(env.items()) == [("A", "1"), ("LLMFORMAT", "1")]


def test_work_dir_replaces_pwd_and_leaves_home_and_tmpdir() -> None:
    base = {"PWD": "/old", "HOME": "/home/x", "TMPDIR": "/t"}
    env = tool_env(base, work_dir="/work/run")
    assert list(env.items()) == [("HOME", "/home/x"), ("TMPDIR", "/t"), ("PWD", "/work/run"), ("LLMFORMAT", "1")]


def test_without_work_dir_the_inherited_pwd_stays() -> None:
    assert tool_env({"PWD": "/here"})["PWD"] == "/here"


def test_the_base_mapping_is_not_changed() -> None:
    base = {"ANTHROPIC_API_KEY": "secret"}
    tool_env(base, work_dir="/w")
    assert base == {"ANTHROPIC_API_KEY": "secret"}


def test_default_base_is_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "secret")
    monkeypatch.setenv("FISKAI_TEST_KEEP", "kept")
    env = tool_env()
    assert "ANTHROPIC_AUTH_TOKEN" not in env
    assert env["FISKAI_TEST_KEEP"] == "kept"
    assert env["LLMFORMAT"] == "1"


async def test_a_child_sees_the_scrubbed_environment_and_its_work_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in SECRETS:
        monkeypatch.setenv(name, "secret")
    monkeypatch.setenv("EMBED_KEY", "secret")
    monkeypatch.setenv("FISKAI_TEST_KEEP", "kept")
    script = tmp_path / "printenv"
    script.write_text(
        f"#!{sys.executable}\nimport json, os\nprint(json.dumps({{**os.environ, 'cwd': os.getcwd()}}))\n",
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    work = tmp_path / "work"
    work.mkdir()

    with anyio.fail_after(10):
        outcome = await run_argv([str(script)], env=tool_env(strip=["EMBED_KEY"], work_dir=str(work)), cwd=str(work))

    seen = json.loads(outcome.output)
    assert not {*SECRETS, "EMBED_KEY"} & seen.keys()
    assert seen["LLMFORMAT"] == "1"
    assert seen["FISKAI_TEST_KEEP"] == "kept"
    assert seen["PWD"] == str(work)
    assert seen["cwd"] == str(work)


def test_otlp_exporter_settings_never_reach_a_tool_even_when_passed() -> None:
    base = {
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer s3cret",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x=1",
        "OTEL_EXPORTER_OTLP_CLIENT_KEY": "/k.pem",
        "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE": "/c.pem",
        "OTEL_SERVICE_NAME": "kept",
    }
    env = tool_env(base, passthrough=["OTEL_EXPORTER_OTLP_HEADERS"])
    assert [name for name in env if name.startswith("OTEL_")] == ["OTEL_SERVICE_NAME"]
