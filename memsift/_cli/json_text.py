"""Edit a JSON file's text in place: the user's indentation, key order and arrays stay as they wrote them.

``json.loads`` then ``json.dumps`` would rewrite the whole file (two-space
indents, every short array expanded). These functions change only the
characters of the element they add or remove:

>>> text = '{\\n    "hooks": {"Stop": [1, 2]}\\n}\\n'
>>> append(text, ["hooks", "Stop"], 3)
'{\\n    "hooks": {"Stop": [1, 2, 3]}\\n}\\n'
>>> remove(text, ["hooks", "Stop", 0])
'{\\n    "hooks": {"Stop": [2]}\\n}\\n'

A path names object keys and array indexes. Call ``json.loads`` on the
result when in doubt: a caller compares it with the object it wanted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # public in json.decoder, not in typeshed

_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


class Node(NamedTuple):
    """A value's place in the text: [start, end), and its children (key or index, node), in order."""

    start: int
    end: int
    children: tuple[tuple[str | int, Node], ...] = ()
    key_start: int = -1  # an object member: where its key's quote is


def parse(text: str) -> Node:
    """The tree of spans of the JSON value in *text* (ValueError when it is not JSON)."""
    node, end = _value(text, _skip(text, 0))
    if _skip(text, end) != len(text):
        raise ValueError(f"extra data at {end}")
    return node


def append(text: str, path: Sequence[str | int], value: Any, key: str | None = None) -> str:
    """*text* with *value* added at the end of the array at *path* (or as member *key* of the object)."""
    container = _at(parse(text), path)
    if container.children:
        last = container.children[-1][1]
        before = container.children[-2][1].end if len(container.children) > 1 else container.start + 1
        between = text[before:last.key_start if last.key_start >= 0 else last.start]
        between = between.split(",", 1)[-1] if len(container.children) > 1 else between or " "
        added = _format(text, key, value, between.rsplit("\n", 1)[-1] if "\n" in between else None)
        return text[:last.end] + "," + between + added + text[last.end:]
    if "\n" not in text.strip():  # a file on one line: the element goes on it
        return text[:container.start + 1] + _format(text, key, value, None) + text[container.end - 1:]
    line_indent = _line_indent(text, container.start)
    indent = line_indent + _unit(text)
    return (text[:container.start + 1] + "\n" + indent + _format(text, key, value, indent) + "\n"
            + line_indent + text[container.end - 1:])


def remove(text: str, path: Sequence[str | int]) -> str:
    """*text* without the array element or object member at *path*, and the comma beside it."""
    container = _at(parse(text), path[:-1])
    keys = [key for key, _ in container.children]
    index = keys.index(path[-1])
    node = container.children[index][1]
    start = node.key_start if node.key_start >= 0 else node.start
    if index + 1 < len(keys):  # the next element takes its place
        following = container.children[index + 1][1]
        return text[:start] + text[following.key_start if following.key_start >= 0 else following.start:]
    if index > 0:  # the last one: the comma before it goes
        return text[:container.children[index - 1][1].end] + text[node.end:]
    return text[:container.start + 1] + text[container.end - 1:]  # the only one: the container is empty


# -- reading ---------------------------------------------------------------------------

def _skip(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    return found.end() if found else at


def _value(text: str, at: int) -> tuple[Node, int]:
    if at >= len(text):
        raise ValueError("unexpected end")
    char = text[at]
    if char == '"':
        _, end = scanstring(text, at + 1)
        return Node(at, end), end
    if char in "{[":
        return _container(text, at)
    found = _SCALAR.match(text, at)
    if not found:
        raise ValueError(f"unexpected {char!r} at {at}")
    return Node(at, found.end()), found.end()


def _container(text: str, at: int) -> tuple[Node, int]:
    closing = "}" if text[at] == "{" else "]"
    children: list[tuple[str | int, Node]] = []
    pos = _skip(text, at + 1)
    if text[pos:pos + 1] == closing:
        return Node(at, pos + 1), pos + 1
    while True:
        key: str | int = len(children)
        key_start = -1
        if closing == "}":
            if text[pos:pos + 1] != '"':
                raise ValueError(f"expected a key at {pos}")
            key_start = pos
            key, pos = scanstring(text, pos + 1)
            pos = _skip(text, pos)
            if text[pos:pos + 1] != ":":
                raise ValueError(f"expected ':' at {pos}")
            pos = _skip(text, pos + 1)
        node, pos = _value(text, pos)
        children.append((key, node._replace(key_start=key_start)))
        pos = _skip(text, pos)
        if text[pos:pos + 1] == ",":
            pos = _skip(text, pos + 1)
            continue
        if text[pos:pos + 1] == closing:
            return Node(at, pos + 1, tuple(children)), pos + 1
        raise ValueError(f"expected ',' or {closing!r} at {pos}")


def _at(node: Node, path: Sequence[str | int]) -> Node:
    for step in path:
        node = dict(node.children)[step]
    return node


# -- writing ---------------------------------------------------------------------------

def _unit(text: str) -> str:
    """The file's indentation step: that of its first indented line (two spaces when none is)."""
    found = re.search(r"\n([ \t]+)\S", text)
    return found.group(1) if found else "  "


def _line_indent(text: str, at: int) -> str:
    line = text[text.rfind("\n", 0, at) + 1:at]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _format(text: str, key: str | None, value: Any, indent: str | None) -> str:
    """*value* (as member *key*) written as the file writes its values: on one line where the file
    does, else indented from *indent*."""
    colon = ": " if re.search(r'":\s', text) or '":' not in text else ":"
    if indent is None:
        dumped = json.dumps(value, ensure_ascii=False, separators=(", ", colon))
    else:
        dumped = json.dumps(value, ensure_ascii=False, indent=_unit(text), separators=(",", colon))
        dumped = dumped.replace("\n", "\n" + indent)
    return dumped if key is None else json.dumps(key, ensure_ascii=False) + colon + dumped
