"""agent.yaml text to plain data plus the line of every key, from PyYAML's node tree.

Composing (not loading) keeps each node's position, so errors can name a line, and sees every key of
a mapping, so a duplicate key is an error instead of PyYAML's silent last-one-wins. Scalars become
`str`, `bool`, `int`, `float` or `None`; a number keeps its source text (`007`, `1.10`) so that a
string-typed key given an unquoted number reads as written, as Go's decoder does. Timestamps stay
strings. Anchors, aliases and `<<` merge keys work; explicit keys override merged ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import cast

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from fiskai_core.errors import ConfigError

from ._origin import KeyPath, Origin

__all__ = ["Document", "YamlFloat", "YamlInt", "read_document"]

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # pyright: ignore[reportAssignmentType]
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

_TAG = "tag:yaml.org,2002:"
_STRING_TAGS = frozenset({_TAG + "str", _TAG + "timestamp"})
_MERGE_TAG = _TAG + "merge"
# A generous ceiling on nodes visited: real configs have hundreds; alias bombs have billions.
_MAX_NODES = 100_000


class YamlInt(int):
    """An integer scalar that remembers how it was written."""

    text: str


class YamlFloat(float):
    """A float scalar that remembers how it was written."""

    text: str


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed file: its data (None when empty) and the line of every key and item."""

    data: object
    lines: dict[KeyPath, int] = field(default_factory=dict[KeyPath, int])


def read_document(text: str, origin: Origin) -> Document:
    """Compose `text` and convert it to plain data.

    Raises:
        ConfigError: malformed YAML (with line and column), a duplicate key, an unsupported tag, a
            non-scalar key, or a recursive or explosive alias.
    """
    try:
        root = cast("Node | None", yaml.compose(text, Loader=_Loader))  # pyright: ignore[reportUnknownMemberType]
    except yaml.MarkedYAMLError as err:
        raise _syntax_error(err, origin) from None
    except yaml.YAMLError as err:
        # Reader errors (bad characters) carry a position, not a mark, and a multi-line text.
        detail = " ".join(str(err).split())
        raise origin.error((), f"malformed YAML: {detail}; fix the file's syntax") from None
    except RecursionError:
        raise origin.error((), "malformed YAML: nested too deeply") from None
    if root is None:
        return Document(None)
    converter = _Converter(origin)
    try:
        data = converter.convert(root, ())
    except RecursionError:
        raise origin.error((), "YAML is nested too deeply") from None
    converter.lines.setdefault((), root.start_mark.line + 1)
    return Document(data, converter.lines)


def _syntax_error(err: yaml.MarkedYAMLError, origin: Origin) -> ConfigError:
    mark = err.problem_mark or err.context_mark
    problem = err.problem or err.context or "unreadable input"
    context = f" ({err.context})" if err.context and err.problem else ""
    where = f"{origin.label}:{mark.line + 1}:{mark.column + 1}" if mark is not None else origin.label
    return ConfigError(f"{where}: malformed YAML: {problem}{context}; fix the syntax at that position")


class _Converter:
    def __init__(self, origin: Origin) -> None:
        self.lines: dict[KeyPath, int] = {}
        # Shares the dict being filled, so errors found mid-walk can already name lines.
        self.origin = replace(origin, lines=self.lines)
        self._constructor = SafeConstructor()
        self._visited = 0
        self._active: set[int] = set()

    def convert(self, node: Node, path: KeyPath) -> object:
        self._visited += 1
        if self._visited > _MAX_NODES:
            raise self.origin.error(path, f"the YAML expands to more than {_MAX_NODES} nodes; check for alias loops")
        if id(node) in self._active:
            raise self.origin.error(path, "a YAML alias refers to itself; remove the recursive alias")
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        self._active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                items: list[object] = []
                for index, item in enumerate(node.value):
                    self.lines.setdefault((*path, index), item.start_mark.line + 1)
                    items.append(self.convert(item, (*path, index)))
                return items
            if isinstance(node, MappingNode):
                return {key: self.convert(value, (*path, key)) for key, value in self._entries(node, path).items()}
            raise self.origin.error(path, "unsupported YAML node")
        finally:
            self._active.discard(id(node))

    def _entries(self, node: MappingNode, path: KeyPath) -> dict[str, Node]:
        explicit: dict[str, Node] = {}
        merged: dict[str, Node] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                for source in self._merge_sources(value_node, path):
                    for key, value in self._entries(source, path).items():
                        merged.setdefault(key, value)
                continue
            if not isinstance(key_node, ScalarNode):
                line = key_node.start_mark.line + 1
                raise self.origin.error(path, "a mapping key must be a plain name, not a list or mapping", line=line)
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in explicit:
                first = self.lines.get((*path, key))
                raise self.origin.error(
                    (*path, key), f"duplicate key (first set at line {first}); keep only one", line=line
                )
            explicit[key] = value_node
            self.lines[(*path, key)] = line
        for key, value in merged.items():
            if key not in explicit:
                self.lines.setdefault((*path, key), value.start_mark.line + 1)
        return {**merged, **explicit}

    def _merge_sources(self, node: Node, path: KeyPath) -> list[MappingNode]:
        if isinstance(node, MappingNode):
            return [node]
        if isinstance(node, SequenceNode) and all(isinstance(item, MappingNode) for item in node.value):
            return list(node.value)
        line = node.start_mark.line + 1
        raise self.origin.error(path, "a '<<' merge key needs a mapping or a list of mappings", line=line)

    def _scalar(self, node: ScalarNode, path: KeyPath) -> object:
        tag = node.tag
        if tag in _STRING_TAGS:
            return str(node.value)
        if tag == _TAG + "null":
            return None
        if tag == _TAG + "bool":
            return self._constructor.construct_yaml_bool(node)
        if tag == _TAG + "int":
            number = YamlInt(self._constructor.construct_yaml_int(node))
            number.text = str(node.value)
            return number
        if tag == _TAG + "float":
            real = YamlFloat(self._constructor.construct_yaml_float(node))
            real.text = str(node.value)
            return real
        line = node.start_mark.line + 1
        shown = tag.replace(_TAG, "!!", 1)
        raise self.origin.error(path, f"unsupported YAML tag {shown}; write a plain value", line=line)
