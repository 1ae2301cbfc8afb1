"""Session backend names and options blocks are checked strictly, with the original's wording."""

from __future__ import annotations

import pytest

from fiskai_runstate.errors import JournalConfigError
from fiskai_runstate.options import (
    FileOptions,
    JetStreamOptions,
    check_backend,
    parse_file_options,
    parse_jetstream_options,
)


def test_an_empty_backend_is_the_file_backend_and_an_unknown_one_is_refused() -> None:
    assert check_backend("") == "file"
    assert check_backend("jetstream") == "jetstream"
    with pytest.raises(JournalConfigError) as caught:
        check_backend("redis")
    assert str(caught.value) == 'unknown session backend "redis": known backends are [file jetstream]'


def test_file_options_take_a_directory_and_nothing_else() -> None:
    assert parse_file_options({}) == FileOptions(directory=None)
    assert parse_file_options({"directory": "runs"}) == FileOptions(directory="runs")
    with pytest.raises(JournalConfigError) as caught:
        parse_file_options({"directroy": "runs"})
    assert str(caught.value) == 'invalid file session options: unknown option "directroy" (known: directory)'
    with pytest.raises(JournalConfigError) as caught:
        parse_file_options({"directory": 3})
    assert str(caught.value) == 'invalid file session options: "directory" must be a string'


def test_jetstream_options_require_an_existing_stream_name() -> None:
    assert parse_jetstream_options({"stream": "RUNS"}) == JetStreamOptions(stream="RUNS")
    with pytest.raises(JournalConfigError) as caught:
        parse_jetstream_options({})
    assert str(caught.value).startswith("jetstream session: options.stream is required")
