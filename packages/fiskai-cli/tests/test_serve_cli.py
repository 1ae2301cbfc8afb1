"""`fiskai serve` start-up refusals: one line naming the fix, before anything connects or listens."""

from pathlib import Path

from click.testing import CliRunner

from fiskai_cli._root import cli
from fiskai_cli.serve._banner import go_duration, section

ROOT = Path(__file__).resolve().parents[3]
APP = ROOT / "examples" / "fixturectl" / "fixturectl"
PROMPTS = "system_prompt: Operate.\nllm: {model: claude-sonnet-4-6}\nexpose: {agent: {a2a: {prompts: {}}}}\n"


def _serve(tmp_path: Path, body: str, *args: str) -> tuple[int, str]:
    path = tmp_path / "agent.yaml"
    path.write_text(f"application_path: {APP}\n{body}", encoding="utf-8")
    result = CliRunner().invoke(cli, ["-c", str(path), "serve", "--server", "nats://127.0.0.1:9", *args])
    assert "Traceback" not in result.stderr
    return result.exit_code, result.stderr


def test_the_old_agent_to_agent_key_is_refused_naming_its_replacement(tmp_path: Path) -> None:
    code, err = _serve(tmp_path, "identity: ops\nexpose: {agent: {agent_to_agent: true}}\n")
    assert code == 1 and "was replaced in 0.0.5: set expose.agent.a2a.serve_tools: true instead" in err


def test_serving_nothing_is_refused(tmp_path: Path) -> None:
    code, err = _serve(tmp_path, "identity: ops\n")
    assert code == 1 and "no endpoint is enabled" in err and "expose.agent.a2a.prompts" in err


def test_prompts_need_an_identity_the_operator_chose(tmp_path: Path) -> None:
    code, err = _serve(tmp_path, PROMPTS)
    assert code == 1 and "identity must be set" in err


def test_prompts_need_a_system_prompt(tmp_path: Path) -> None:
    code, err = _serve(tmp_path, "identity: ops\nllm: {model: m}\nexpose: {agent: {a2a: {prompts: {}}}}\n")
    assert code == 1 and "system_prompt is required to answer prompts" in err


def test_a_missing_session_directory_is_refused_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "runs"
    code, err = _serve(tmp_path, f"identity: ops\n{PROMPTS}", "--state-dir", str(missing))
    assert code == 1 and f'the session directory "{missing}" does not exist' in err and "provisions nothing" in err
    assert not missing.exists()


def test_work_dir_must_be_an_absolute_existing_directory(tmp_path: Path) -> None:
    code, err = _serve(tmp_path, "identity: ops\nexpose: {agent: {a2a: {serve_tools: true}}}\n", "--work-dir", "rel")
    assert code == 1 and '--work-dir "rel" must be an absolute path' in err


def test_an_empty_api_key_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    key = tmp_path / "key"
    key.write_text("  \n", encoding="utf-8")
    args = ("--state-dir", str(tmp_path / "runs"), "--api-key-file", str(key))
    code, err = _serve(tmp_path, f"identity: ops\n{PROMPTS}", *args)
    assert code == 1 and "is empty" in err


def test_banner_durations_and_sections_read_as_the_go_banner() -> None:
    from datetime import timedelta

    assert [go_duration(timedelta(seconds=s)) for s in (300, 30, 0, 90, 3600)] == [
        "5m0s",
        "30s",
        "0s",
        "1m30s",
        "1h0m0s",
    ]
    text = section([("", "Serving tools over a2a:"), ("Tools", "choria.fisk-ai.tool.x"), ("Exposed", "a\nb")])
    assert text.splitlines() == [
        "  Serving tools over a2a:",
        "",
        "            Tools: choria.fisk-ai.tool.x",
        "          Exposed: a",
        "                   b",
    ]


JOBS = "system_prompt: Operate.\nllm: {model: claude-sonnet-4-6}\nexpose: {agent: {jobs: {}}}\n"


def test_jobs_alone_are_an_endpoint_and_need_a_system_prompt(tmp_path: Path) -> None:
    code, err = _serve(tmp_path, "llm: {model: m}\nexpose: {agent: {jobs: {}}}\n")
    assert code == 1 and "system_prompt is required to take queued jobs (expose.agent.jobs)" in err


def test_jobs_refuse_a_missing_session_directory(tmp_path: Path) -> None:
    missing = tmp_path / "runs"
    code, err = _serve(tmp_path, JOBS, "--state-dir", str(missing))
    assert code == 1 and f'the session directory "{missing}" does not exist' in err and not missing.exists()


def test_workers_must_be_at_least_one(tmp_path: Path) -> None:
    code, err = _serve(tmp_path, JOBS, "--workers", "0")
    assert code == 1 and "--workers 0: must be at least 1" in err


def test_web_refusals(tmp_path: Path) -> None:
    web = "identity: ops\nsystem_prompt: s\nllm: {model: m}\nexpose: {agent: {web: {origins: [http://a.example]}}}\n"
    code, err = _serve(tmp_path, web.replace("system_prompt: s\n", ""))
    assert code == 1 and "system_prompt is required to answer on the web (expose.agent.web)" in err
    code, err = _serve(tmp_path, web.replace("identity: ops\n", ""))
    assert code == 1 and "identity must be set" in err
    code, err = _serve(tmp_path, f"identity: ops\n{PROMPTS}", "--token-env", "T")
    assert code == 1 and "--token-env guards the web channel" in err
    code, err = _serve(tmp_path, web, "--token-env", "FISKAI_TEST_UNSET_TOKEN")
    assert code == 1 and "FISKAI_TEST_UNSET_TOKEN is unset or empty" in err


def test_identity_is_read_with_the_config_loader_not_a_second_parser(tmp_path: Path) -> None:
    # `[a, b?, c]` is valid YAML fiskai's loader reads but pure-Python PyYAML refuses, and `2026-13-45`
    # a timestamp PyYAML cannot construct: neither may make serve say the identity is missing.
    missing = tmp_path / "runs"
    for value in ("[a, b?, c]", "[2026-13-45]"):
        code, err = _serve(tmp_path, f"identity: ops\nprompts: {value}\n{PROMPTS}", "--state-dir", str(missing))
        assert code == 1 and "identity must be set" not in err, err
        assert f'the session directory "{missing}" does not exist' in err, "start-up went past the identity check"
    code, err = _serve(tmp_path, f"identity: ''\nprompts: [a, b?, c]\n{PROMPTS}", "--state-dir", str(missing))
    assert code == 1 and "identity must be set" in err, "an empty identity is not written"
