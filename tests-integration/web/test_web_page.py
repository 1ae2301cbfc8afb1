"""The chat page of `fiskai serve`'s web channel, driven in headless Chromium (issue 32, item 2).

A real `fiskai serve` subprocess (this folder's `web_worker`) serves the page and `expose.agent.web`'s
routes on a free loopback port, the page's own origin allowed; the model is `MessagesServer`; fixturectl
is a shell script that answers `--fisk-introspect` with the real model and records every run's argv in
`effects.log`. Playwright for Python drives Debian's chromium
(`FISKAI_CHROMIUM`, default `/usr/bin/chromium`; `.ci/run` installs it), so no browser is downloaded.
"""

from __future__ import annotations

import json
import os
import re
import socket
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use

from .conftest import WebWorker

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

_ROOT = Path(__file__).resolve().parents[2]
_MODEL = _ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json"
_CHROMIUM = Path(os.environ.get("FISKAI_CHROMIUM") or "/usr/bin/chromium")
# What a hostile model might write: it must reach the page as text, never as markup.
_MARKUP = '<img src=x onerror="document.title=1">'
_ROW = re.compile(r"^drain the unhealthy nodes")  # a listed conversation: its title, then when and how it ended


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (uv sync)")
    if not os.access(_CHROMIUM, os.X_OK):
        pytest.skip(
            f"chromium not found at {_CHROMIUM}: apt-get install chromium (.ci/run does) or set FISKAI_CHROMIUM"
        )
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(_CHROMIUM), headless=True)
        try:
            yield launched
        finally:
            launched.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _write_config(folder: Path, port: int) -> Path:
    """An agent over fixturectl on the web channel; `cluster node list` takes 3 s, so a test sees the
    text that came before it on the page while the turn is still running."""
    app = folder / "fixturectl"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "{_MODEL}"; fi\n'
        'echo "$*" >> "$(dirname "$0")/effects.log"\n'
        'case "$*" in\n'
        '  *"node list"*) sleep 3; printf "n1 up\\nn3 down\\n" ;;\n'
        '  *"node drain"*) for arg; do last="$arg"; done; echo "drained $last" ;;\n'
        "esac\n",
        encoding="utf-8",
    )
    app.chmod(0o755)
    config = folder / "agent.yaml"
    config.write_text(
        "identity: ops-agent\n"
        f"application_path: {app}\n"
        "system_prompt: You operate the cluster.\n"
        "display_name: Cluster operations\n"
        "description: Inspects and drains the cluster's nodes.\n"
        "prompts: [drain the unhealthy nodes, list the nodes]\n"
        "llm: {model: claude-sonnet-4-6}\n"
        "harness: {human_in_the_loop: {enabled: true}}\n"
        f"expose: {{agent: {{web: {{listen: '127.0.0.1:{port}', origins: ['http://127.0.0.1:{port}']}}}}}}\n",
        encoding="utf-8",
    )
    (folder / "runs").mkdir()
    return config


# Every visible text node's colour against the background it is drawn on (the first opaque one up the
# tree): the WCAG 2 contrast ratio, and the ones under AA's 4.5:1 for normal text.
_CONTRAST = """() => {
  const lum = (c) => { const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map((v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const opaque = (c) => !/rgba\\(.*, 0\\)$/.test(c) && c !== "transparent";
  const low = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el.checkVisibility() || el.closest("button:disabled")) continue;
    let bg = el;
    while (bg && !opaque(getComputedStyle(bg).backgroundColor)) bg = bg.parentElement;
    const [a, b] = [lum(getComputedStyle(el).color), lum(getComputedStyle(bg || document.documentElement).backgroundColor)];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) low.push(`${node.textContent.trim().slice(0, 30)}: ${ratio.toFixed(2)}`);
  }
  return low;
}"""


def _open(browser: Browser, url: str, problems: list[str]) -> Page:
    """A new tab on the page; its uncaught script errors are appended to `problems`."""
    page = browser.new_page(viewport={"width": 1200, "height": 860})
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(url)
    return page


def _drain_script() -> list[Turn]:
    return [
        Turn([text("I'll list the nodes first."), tool_use("cluster_node_list", {}, id="toolu_list")]),
        Turn(
            [
                text("Node n3 is down; draining it needs your approval."),
                tool_use("cluster_node_drain", {"node": "n3", "reason": "down"}, id="toolu_drain"),
            ]
        ),
        Turn([text(f"n3 is drained. {_MARKUP}")]),
    ]


def test_ask_watch_it_stream_approve_the_gated_call_and_find_the_conversation_after_a_reload(
    browser: Browser, web_worker: Callable[..., WebWorker], tmp_path: Path
) -> None:
    """Steps:
    1. The card's name and prompts are on the page; a prompt typed and sent with Enter starts a turn.
    2. The model's first text is on the page while the slow `cluster node list` still runs (the turn is
       busy): the answer streams, it is not drawn at the end.
    3. The gated drain ends the turn on an approval: the folded card shows the command line, and
       "Allow once" answers it; the drain runs (effects.log) and the answer arrives, as text.
    4. After a reload the conversation is in the list; opening it replays the prompt and the answer.
    """
    from playwright.sync_api import expect

    with MessagesServer(_drain_script()) as model:
        url = web_worker(model, config=_write_config(tmp_path, _free_port())).url
        problems: list[str] = []
        page = _open(browser, url, problems)
        expect(page.get_by_role("heading", level=1)).to_have_text("Cluster operations")
        expect(page.get_by_role("list", name="Suggested prompts").get_by_role("button")).to_have_text(
            ["drain the unhealthy nodes", "list the nodes"]
        )
        log = page.get_by_role("log", name="Conversation")
        page.get_by_label("Message to the agent").fill("drain the unhealthy nodes")
        page.get_by_label("Message to the agent").press("Enter")

        expect(log).to_contain_text("I'll list the nodes first.")
        # Still inside the turn: the listing sleeps 3 s and nothing after it has arrived.
        assert page.locator("article.assistant[aria-busy=true]").count() == 1
        assert page.get_by_role("button", name="Send").is_disabled()
        assert "Node n3 is down" not in (log.text_content() or "")

        approval = page.get_by_role("group", name="Approval")
        expect(approval).to_be_visible(timeout=20_000)
        expect(approval).to_contain_text("drain")
        expect(approval).to_contain_text("n3")
        expect(page.get_by_role("status")).to_have_text("The agent is waiting for your answer.")
        effects = tmp_path / "effects.log"
        assert "drain" not in effects.read_text(encoding="utf-8")  # asked first, not run
        drain_card = page.locator("details.tool", has_text="drain")
        expect(drain_card).to_have_attribute("open", "")
        expect(drain_card.locator("summary")).to_contain_text("waiting for your approval")

        page.get_by_role("button", name="Allow once").click()
        expect(log).to_contain_text("n3 is drained.", timeout=20_000)
        expect(drain_card.locator("summary")).to_contain_text("(done)")
        expect(drain_card).to_contain_text("drained n3")
        assert "cluster node drain --reason=down -- n3" in effects.read_text(encoding="utf-8").splitlines()
        assert page.locator("#transcript img").count() == 0
        expect(log).to_contain_text(_MARKUP)
        expect(approval).to_have_count(0)
        # The listing's card is folded; its summary still names the call.
        list_card = page.locator("details.tool", has_text="cluster_node_list")
        expect(list_card).not_to_have_attribute("open", "")

        page.reload()
        sessions = page.get_by_role("complementary", name="Conversations")
        expect(sessions.get_by_role("button", name=_ROW)).to_be_visible()
        expect(log).to_have_text("")
        sessions.get_by_role("button", name=_ROW).click()
        expect(log).to_contain_text("drain the unhealthy nodes")
        expect(log).to_contain_text("n3 is drained.")
        replayed = page.locator("details.tool", has_text="cluster_node_drain")
        expect(replayed.locator("summary")).to_contain_text("(done)")
        expect(replayed).to_contain_text("drained n3")
        assert problems == []


def test_a_suggestion_asks_the_keyboard_declines_and_the_list_deletes(
    browser: Browser, web_worker: Callable[..., WebWorker], tmp_path: Path
) -> None:
    """Steps:
    1. A suggestion button starts the turn; the approval takes the focus; all visible text meets WCAG
       AA contrast in the dark and light schemes.
    2. After a reload the conversation is listed as waiting; opened, it ends on the same approval, which
       takes the focus; Tab then Enter reaches "Decline" without a mouse: the drain never runs and the
       model is told it was refused.
    3. The conversation's Delete button (confirmed in the browser's dialog) removes it from the list and
       from the store: its replay route answers 404.
    """
    from playwright.sync_api import expect

    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n3", "reason": "down"}, id="toolu_drain")]),
        Turn([text("Understood, n3 stays as it is.")]),
    ]
    with MessagesServer(script) as model:
        url = web_worker(model, config=_write_config(tmp_path, _free_port())).url
        problems: list[str] = []
        page = _open(browser, url, problems)
        log = page.get_by_role("log", name="Conversation")
        page.get_by_role("list", name="Suggested prompts").get_by_role(
            "button", name="drain the unhealthy nodes"
        ).click()
        approval = page.get_by_role("group", name="Approval")
        expect(approval).to_be_focused(timeout=20_000)
        for scheme in ("dark", "light"):
            page.emulate_media(color_scheme=scheme)
            low = page.evaluate(_CONTRAST)
            assert low == [], f"text under WCAG AA contrast (4.5:1) in the {scheme} scheme: {low}"
        # The question outlives the page: reopened from the list, the conversation ends on it, focused.
        page.reload()
        sessions = page.get_by_role("complementary", name="Conversations")
        expect(sessions.get_by_role("button", name=_ROW)).to_contain_text("waiting")
        sessions.get_by_role("button", name=_ROW).click()
        expect(approval).to_be_focused()
        expect(approval).to_contain_text("--reason=down -- n3")
        for _ in range(3):
            page.keyboard.press("Tab")
        expect(page.get_by_role("button", name="Decline")).to_be_focused()
        page.keyboard.press("Enter")
        expect(log).to_contain_text("Understood, n3 stays as it is.", timeout=20_000)
        effects = tmp_path / "effects.log"
        assert not effects.exists() or "drain" not in effects.read_text(encoding="utf-8")
        refused = {block["tool_use_id"]: block for block in model.requests[-1].tool_results()}["toolu_drain"]
        assert json.loads(str(refused["content"]))["allowed"] is False

        expect(sessions.get_by_role("button", name=_ROW)).to_be_visible()
        session_id = page.evaluate("current")
        page.once("dialog", lambda dialog: dialog.accept())
        sessions.get_by_role("button", name="Delete conversation: drain the unhealthy nodes").click()
        expect(page.get_by_role("status")).to_have_text("Conversation deleted.")
        expect(sessions.get_by_role("button", name=_ROW)).to_have_count(0)
        with pytest.raises(urllib.error.HTTPError) as gone:
            urllib.request.urlopen(f"{url}/vercel/sessions/{session_id}", timeout=5)
        gone.value.close()
        assert gone.value.code == 404
        assert problems == []


def test_an_ask_human_question_is_answered_with_its_option_button(
    browser: Browser, web_worker: Callable[..., WebWorker], tmp_path: Path
) -> None:
    """`ask_human_select` ends the turn on a question naming its options; the chosen option's button
    answers it on the next POST and the model gets that option."""
    from playwright.sync_api import expect

    script = [
        Turn(
            [tool_use("ask_human_select", {"question": "Which node first?", "options": ["n1", "n3"]}, id="toolu_ask")]
        ),
        Turn([text("Starting with n3.")]),
    ]
    with MessagesServer(script) as model:
        url = web_worker(model, config=_write_config(tmp_path, _free_port())).url
        problems: list[str] = []
        page = _open(browser, url, problems)
        page.get_by_label("Message to the agent").fill("pick a node")
        page.get_by_role("button", name="Send").click()
        question = page.get_by_role("group", name="Question from the agent")
        expect(question).to_contain_text("Which node first?", timeout=20_000)
        question.get_by_role("button", name="n3").click()
        expect(page.get_by_role("log", name="Conversation")).to_contain_text("Starting with n3.", timeout=20_000)
        expect(question).to_contain_text("You answered: n3")
        answered = {block["tool_use_id"]: block for block in model.requests[-1].tool_results()}["toolu_ask"]
        assert '"n3"' in str(answered["content"])
        assert problems == []


def test_ask_human_confirm_and_input_questions_are_answered_in_the_page(
    browser: Browser, web_worker: Callable[..., WebWorker], tmp_path: Path
) -> None:
    """One conversation, two questions: `ask_human_confirm`'s "No" button answers `{"confirmed": false}`;
    then `ask_human_input` shows its default in a labelled field, and the edited text is the answer."""
    from playwright.sync_api import expect

    script = [
        Turn([tool_use("ask_human_confirm", {"question": "Drain n3 now?"}, id="toolu_confirm")]),
        Turn([tool_use("ask_human_input", {"question": "Why drain it?", "default": "disk"}, id="toolu_input")]),
        Turn([text("Noted, not draining.")]),
    ]
    with MessagesServer(script) as model:
        url = web_worker(model, config=_write_config(tmp_path, _free_port())).url
        problems: list[str] = []
        page = _open(browser, url, problems)
        page.get_by_label("Message to the agent").fill("drain n3")
        page.get_by_label("Message to the agent").press("Enter")
        questions = page.get_by_role("group", name="Question from the agent")
        confirm = questions.filter(has_text="Drain n3 now?")
        expect(confirm).to_be_visible(timeout=20_000)
        expect(confirm.get_by_role("button")).to_have_text(["Yes", "No"])
        confirm.get_by_role("button", name="No").click()
        expect(confirm).to_contain_text("You answered: No")
        expect(confirm.get_by_role("button", name="Yes")).to_be_disabled()

        asked = questions.filter(has_text="Why drain it?")
        expect(asked).to_be_visible(timeout=20_000)
        field = asked.get_by_label("Your answer")
        expect(field).to_have_value("disk")
        field.fill("a failing <b>disk</b>")
        asked.get_by_role("button", name="Answer").click()
        expect(page.get_by_role("log", name="Conversation")).to_contain_text("Noted, not draining.", timeout=20_000)
        expect(asked).to_contain_text("You answered: a failing <b>disk</b>")
        results = {block["tool_use_id"]: block for request in model.requests for block in request.tool_results()}
        assert json.loads(str(results["toolu_confirm"]["content"])) == {"confirmed": False}
        assert json.loads(str(results["toolu_input"]["content"])) == {"value": "a failing <b>disk</b>"}
        assert problems == []


def test_a_worker_with_a_token_gets_it_from_the_form_and_the_page_works(
    browser: Browser, web_worker: Callable[..., WebWorker], tmp_path: Path
) -> None:
    """Under `--token-env` every API route answers 401 without the bearer token: the page shows its token
    field (focused), and once it is given the card, the list and a turn work."""
    from playwright.sync_api import expect

    with MessagesServer([Turn([text("All nodes are up.")])]) as model:
        config = _write_config(tmp_path, _free_port())
        url = web_worker(model, "--token-env", "WEB_TOKEN", config=config, env={"WEB_TOKEN": "s3cret"}).url
        problems: list[str] = []
        page = _open(browser, url, problems)
        field = page.get_by_label("This agent needs its access token:")
        expect(field).to_be_focused()
        expect(page.get_by_role("heading", level=1)).to_have_text("fiskai")  # the card was refused
        field.fill("s3cret")
        field.press("Enter")
        expect(page.get_by_role("heading", level=1)).to_have_text("Cluster operations")
        expect(field).to_be_hidden()
        page.get_by_label("Message to the agent").fill("are the nodes up?")
        page.get_by_label("Message to the agent").press("Enter")
        expect(page.get_by_role("log", name="Conversation")).to_contain_text("All nodes are up.", timeout=20_000)
        assert problems == []
