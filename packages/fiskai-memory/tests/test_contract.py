"""The backend contract suite, run on the in-memory and file backends (NATS KV runs it in test_kv.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_memory import FileMemoryStore, Store
from fiskai_memory.testing import CONTRACT_CHECKS, ContractCheck, InMemoryMemoryStore

pytestmark = pytest.mark.anyio

CHECKS = pytest.mark.parametrize("check", list(CONTRACT_CHECKS.values()), ids=list(CONTRACT_CHECKS))


def test_backends_satisfy_the_store_protocol(tmp_path: Path) -> None:
    stores: list[Store] = [InMemoryMemoryStore(), InMemoryMemoryStore(require_read_before_update=True)]
    stores.append(FileMemoryStore(tmp_path))
    assert len(stores) == 3


@CHECKS
async def test_in_memory_store_meets_the_contract(check: ContractCheck) -> None:
    await check(InMemoryMemoryStore())


@CHECKS
async def test_guarded_in_memory_store_meets_the_contract(check: ContractCheck) -> None:
    await check(InMemoryMemoryStore(require_read_before_update=True))


@CHECKS
async def test_file_store_meets_the_contract(check: ContractCheck, tmp_path: Path) -> None:
    await check(FileMemoryStore(tmp_path / "memory"))
