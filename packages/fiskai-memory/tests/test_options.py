from __future__ import annotations

import pytest

from fiskai_memory import check_backend, parse_file_options, parse_kv_options
from fiskai_memory.errors import MemoryConfigError
from fiskai_memory.options import FileOptions, KvOptions


def test_known_backends_and_the_file_default() -> None:
    assert check_backend("") == "file"
    assert check_backend("jetstream") == "jetstream"
    with pytest.raises(MemoryConfigError) as raised:
        check_backend("redis")
    assert str(raised.value) == 'unknown memory backend "redis": known backends are [file jetstream]'


def test_file_options_are_strict() -> None:
    assert parse_file_options({}) == FileOptions()
    assert parse_file_options({"directory": "mem"}) == FileOptions(directory="mem")
    with pytest.raises(MemoryConfigError, match='invalid file memory options: unknown option "dir"'):
        parse_file_options({"dir": "mem"})
    with pytest.raises(MemoryConfigError, match='"directory" must be a string'):
        parse_file_options({"directory": 3})


def test_jetstream_options_are_strict() -> None:
    assert parse_kv_options({}) == KvOptions()
    assert parse_kv_options({"bucket": "b", "prefix": "", "no_require_read_before_update": True}) == KvOptions(
        bucket="b", prefix="", require_read_before_update=False
    )
    assert parse_kv_options({"prefix": None}).prefix is None
    with pytest.raises(MemoryConfigError, match='unknown option "stream"'):
        parse_kv_options({"stream": "x"})
    with pytest.raises(MemoryConfigError, match="must be true or false"):
        parse_kv_options({"no_require_read_before_update": "yes"})
    with pytest.raises(MemoryConfigError, match='"bucket" must be a string'):
        parse_kv_options({"bucket": ["a"]})
