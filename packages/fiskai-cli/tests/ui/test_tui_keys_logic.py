"""The pure parts behind the full screen's keys: search, input history, OSC 52, unfolding, the spinner."""

from __future__ import annotations

import base64

from fiskai_cli.ui.tui.clipboard import osc52
from fiskai_cli.ui.tui.history import InputHistory
from fiskai_cli.ui.tui.search import find_row
from fiskai_cli.ui.tui.status import Status, status_line
from fiskai_cli.ui.tui.transcript import Transcript, entry


def test_search_is_case_insensitive_starts_where_asked_and_wraps() -> None:
    rows = ["alpha", "Needle one", "beta", "needle TWO"]
    assert find_row(rows, "NEEDLE", 0) == 1
    assert find_row(rows, "needle", 2) == 3
    assert find_row(rows, "needle", 4) == 1  # wraps past the end
    assert find_row(rows, "gamma", 0) is None
    assert find_row(rows, "", 0) is None


def test_history_recalls_newest_first_keeps_the_draft_and_stores_repeats_once() -> None:
    history = InputHistory()
    assert history.previous("draft") is None
    for text in ("one", "two", "two"):
        history.add(text)
    assert history.previous("my draft") == "two"
    assert history.previous("two") == "one"
    assert history.previous("one") is None  # the oldest
    assert history.next() == "two"
    assert history.next() == "my draft"
    assert history.next() is None


def test_osc52_carries_the_text_base64_encoded() -> None:
    sequence = osc52("héllo\nworld")
    assert sequence.startswith("\x1b]52;c;") and sequence.endswith("\x07")
    assert base64.b64decode(sequence[7:-1]).decode() == "héllo\nworld"


def test_a_search_unfolds_the_kind_that_hides_the_term_and_copy_is_unfolded() -> None:
    transcript = Transcript()
    transcript.add(entry("call", "list"))
    transcript.add(entry("result", "<-", "n1 up\nn2 down"))
    assert not any("n2 down" in row.text for row in transcript.rows())
    assert "n2 down" in transcript.plain_text()
    assert transcript.unfold_for("N2 DOWN") and not transcript.fold_output
    assert any("n2 down" in row.text for row in transcript.rows())
    assert not transcript.unfold_for("absent")


def test_the_spinner_shows_only_while_the_run_works() -> None:
    working = status_line(Status(), title="fiskai", keys="q quit", notice="", width=120)
    assert any(f"{frame} [running]" in working for frame in "|/-\\")
    waiting = status_line(Status(state="ready for input"), title="fiskai", keys="q quit", notice="", width=120)
    assert "  [ready for input]" in waiting and not any(f"{f} [ready" in waiting for f in "|/-\\")
