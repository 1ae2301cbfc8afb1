"""Reading agent.yaml: file to text, text to YAML nodes, nodes to `Config`, then the mode's rules.

This is the only place that reads configuration YAML; everything else receives typed settings.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import cast

from pydantic import ValidationError

from fiskai_core._gojson import go_quote
from fiskai_core.errors import ConfigError

from ._config import Config, attach_origin
from ._diagnostics import describe, explain
from ._modes import Mode, validate_for_mode
from ._origin import Origin
from ._schema import as_written
from ._yaml import read_document

__all__ = ["load_config", "parse_config"]


def load_config(path: str | os.PathLike[str], mode: Mode) -> Config:
    """Read, validate and resolve the agent.yaml at `path` for `mode`.

    Args:
        path: the configuration file; errors name it as given.
        mode: the command the configuration is for; decides which settings are required.

    Returns:
        The resolved configuration, with `source_path` set to `path`.

    Raises:
        ConfigError: the file is unreadable or invalid; the message names the file, line, key and fix.
    """
    file_path = Path(path)
    label = os.fspath(path)
    try:
        raw = file_path.read_bytes()
    except FileNotFoundError:
        raise _unreadable(label, "the file does not exist; create it, or pass --config with an existing file") from None
    except IsADirectoryError:
        raise _unreadable(label, "it is a directory; pass --config with the agent.yaml file inside it") from None
    except PermissionError:
        raise _unreadable(label, "permission denied; make the file readable by this user") from None
    except OSError as err:
        raise _unreadable(label, f"{err.strerror or err}; check the path and the file") from err
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise _unreadable(label, f"byte {err.start} is not UTF-8; save the file as UTF-8 text") from None
    return _parse(text, Mode(mode), Origin(label=label, path=file_path))


def parse_config(text: str, mode: Mode, source: str = "agent.yaml") -> Config:
    """Validate and resolve agent.yaml content for `mode`, as `load_config` does for a file.

    Args:
        text: the YAML document.
        mode: the command the configuration is for.
        source: how errors name the document.

    Raises:
        ConfigError: the content is invalid; the message names `source`, the line, the key and the fix.
    """
    return _parse(text, Mode(mode), Origin(label=source))


def _parse(text: str, mode: Mode, origin: Origin) -> Config:
    document = read_document(text, origin)
    origin = replace(origin, lines=document.lines)
    data: object = {} if document.data is None else document.data
    if not isinstance(data, dict):
        raise origin.error(
            (),
            f"the top level must be a mapping of settings (identity, llm, harness, ...); got {describe(data)}",
            line=origin.lines.get(()),
        )
    try:
        config = Config.model_validate(data)
    except ValidationError as err:
        raise explain(err, Config, origin) from None
    written = as_written(cast("dict[str, object]", data).get("identity"))
    config = attach_origin(config, origin, identity_written=written not in (None, ""))
    validate_for_mode(config, mode, origin)
    return config


def _unreadable(label: str, reason: str) -> ConfigError:
    return ConfigError(f"reading config {go_quote(label)}: {reason}")
