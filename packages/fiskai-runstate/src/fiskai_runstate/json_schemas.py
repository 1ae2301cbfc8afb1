"""The JSON Schemas (draft 2020-12) of every journal record, shipped as package data.

They describe the wire format for external consumers and tests; the library does not validate against
them at runtime (its own decoder is stricter about types and is what the speed budget is measured on).
Files live in `schemas/v1/`; `$id`s are under `SCHEMA_BASE` and refer to each other relatively.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Final

__all__ = ["SCHEMA_BASE", "schema_documents"]

SCHEMA_BASE: Final = "https://fiskai.invalid/schemas/runstate/v1/"
"""Base of every `$id`. The `.invalid` domain marks these as identifiers that are never fetched."""


def schema_documents() -> dict[str, dict[str, Any]]:
    """Every schema document by its `$id`, common definitions included.

    Returns:
        A mapping ready to register with a JSON Schema validator; each record schema's `$id` ends in
        `session.<kind>.json` and its `protocol` const is `io.choria.fisk-ai.v1.session.<kind>`.
    """
    folder = resources.files("fiskai_runstate").joinpath("schemas", "v1")
    documents: dict[str, dict[str, Any]] = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".json"):
            document = json.loads(entry.read_text(encoding="utf-8"))
            documents[document["$id"]] = document
    return documents
