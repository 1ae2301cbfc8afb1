"""`fiskai ask` refuses a malformed request before connecting: one line naming the fix."""

import pytest
from click.testing import CliRunner

from fiskai_cli._root import cli


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--continue", "T", "--answer", "toolu_1"], "give the call and the choice"),
        (["--continue", "T", "--answer", "toolu_1=maybe"], "no, once or always"),
        (["--answer", "toolu_1=once"], "--answer needs --continue TOKEN"),
        (["hello", "--continue", "T", "--answer", "toolu_1=once"], "--answer needs --continue TOKEN and no prompt"),
    ],
)
def test_a_malformed_answer_is_refused_naming_the_form(args: list[str], says: str) -> None:
    result = CliRunner().invoke(cli, ["ask", "ops", *args, "--server", "nats://127.0.0.1:9"])
    assert result.exit_code == 2 and says in result.stderr
    assert "Traceback" not in result.stderr
