"""Bounded YAML loading: the one door through which user YAML enters Corral.

Contract: :func:`load_all` returns the non-empty documents of a text as JSON-shaped data
(mappings, lists, strings, numbers, booleans, null), or raises :class:`YamlError` with one line
saying where (``source:line:column``) and what. It never hangs, recurses without bound, or
expands aliases into more than :data:`MAX_EXPANDED_NODES` nodes, whatever the input:

- a text longer than ``max_bytes`` is refused before it is parsed;
- nesting deeper than :data:`MAX_DEPTH` is refused while composing (PyYAML recurses per level);
- aliases are allowed (kubectl accepts them) but a document whose aliases would expand beyond
  :data:`MAX_EXPANDED_NODES` nodes is refused (an alias bomb is a few lines);
- a key repeated in one mapping is refused with the path of the mapping (YAML forbids it, PyYAML
  silently keeps the last; kubectl refuses it too); ``<<`` merges may still be overridden;
- tags are checked while composing, before anything is constructed, with the field path:
  tags that do not map to JSON (timestamps, ``!!binary``, ``!!set``, local ``!tags``, ...) are
  refused; a JSON tag must fit its node (``!!str`` on a scalar, ``!!seq`` on a sequence) and its
  value (``!!int abc``, ``!!bool maybe`` and ``!!float x`` are refused); an unquoted date, ``=``
  and ``!`` stay strings, as Kubernetes' YAML-to-JSON conversion keeps them;
- numbers are JSON numbers: a literal longer than :data:`MAX_NUMBER_TEXT` characters is
  refused before it is converted (CPython's 4,300-digit ``int()`` limit is far above; each
  reader range-checks the integers it gets at its field's type), and infinities and NaN
  (``.inf``, ``1e400``) are refused, JSON has none.

Only the standard library and PyYAML: every layer (config, API, CLI, the API client's kubeconfig)
may use it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Final

import yaml
from yaml.composer import ComposerError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_BYTES: Final = 4 * 2**20
MAX_DEPTH: Final = 100
MAX_EXPANDED_NODES: Final = 1_000_000
MAX_NUMBER_TEXT: Final = 400
_Y: Final = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (f"{_Y}{t}" for t in ("str", "int", "float", "bool", "null"))
_SEQ, _MAP, _MERGE = f"{_Y}seq", f"{_Y}map", f"{_Y}merge"
# Implicit resolvers PyYAML has that Kubernetes' YAML decoder does not: those plain scalars stay
# strings (a date, "=" and "!").
_STRING_LOOKALIKES: Final = (f"{_Y}timestamp", f"{_Y}value", f"{_Y}yaml")
_RESOLVED: Final = {
    tag: rx
    for resolvers in yaml.SafeLoader.yaml_implicit_resolvers.values()
    for tag, rx in resolvers
}
# An explicit !!float may hold any number written the way JSON or Go writes one ("1", "1e5").
_NUMBER_TEXT: Final = re.compile(r"[-+]?(?:[0-9][0-9_]*\.?[0-9_]*|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?")
# Go's YAML decoder reads these plain scalars as floats where YAML 1.1 (PyYAML) keeps a string:
# an exponent without a dot or a signed exponent ("1e3", "1.5e3"); tried after PyYAML's own.
_GO_FLOAT: Final = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_NUMBER_START: Final = frozenset("-+0123456789.")
_A: Final = {_INT: "an integer", _BOOL: "a boolean", _NULL: "null"}
# Hexadecimal and binary literals this long are past 400 decimal digits too.
_MAX_BASE_2_TEXT: Final = 300


class YamlError(ValueError):
    """Unusable YAML: ``where`` is ``source[:line:column]``, ``message`` says what is wrong
    (``path: what`` when the problem is a node's tag or number, ``path`` then set too);
    ``line`` and ``column`` (from 1) when YAML gives a position."""

    def __init__(
        self,
        source: str,
        message: str,
        line: int | None = None,
        column: int | None = None,
        *,
        path: str | None = None,
    ) -> None:
        self.where = source if line is None else f"{source}:{line}:{column}"
        super().__init__(f"{self.where}: {message}")
        self.source = source
        self.message = message
        self.line = line
        self.column = column
        self.path = path


class _Refused(yaml.MarkedYAMLError):
    """A node refused with the path of its field (``path: message``), before construction."""

    def __init__(self, path: str, message: str, mark: Any) -> None:
        super().__init__(None, None, message, mark)
        self.path = path


class _Loader(yaml.SafeLoader):
    """SafeLoader with a depth limit, duplicate-key refusal and JSON-only tags and numbers."""

    yaml_implicit_resolvers = {  # noqa: RUF012 - PyYAML's per-class table, read-only here
        first: [(tag, rx) for tag, rx in resolvers if tag not in _STRING_LOOKALIKES]
        + ([(_FLOAT, _GO_FLOAT)] if first in _NUMBER_START else [])
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self._path: list[str] = []
        self._key = False

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        # PyYAML composes a mapping's key with index None, its value with the key's node.
        self._key = isinstance(parent, MappingNode) and index is None
        if parent is not None:
            key = f"[{index}]" if isinstance(index, int) else _key_text(index)
            self._path.append(key)
        if len(self._path) > MAX_DEPTH:
            raise ComposerError(
                None,
                None,
                f"nested deeper than {MAX_DEPTH} levels",
                self.peek_event().start_mark,  # type: ignore[no-untyped-call]
            )
        try:
            return super().compose_node(parent, index)
        finally:
            if parent is not None:
                self._path.pop()

    def _refuse(self, node: Node, message: str) -> _Refused:
        return _Refused(_dotted(self._path) or "<root>", message, node.start_mark)

    def compose_scalar_node(self, anchor: Any) -> ScalarNode:
        written = self.peek_event().tag  # type: ignore[no-untyped-call]
        node = super().compose_scalar_node(anchor)
        _check_scalar(self, node, explicit=written not in (None, "!"), key=self._key)
        return node

    def compose_sequence_node(self, anchor: Any) -> SequenceNode:
        node = super().compose_sequence_node(anchor)
        if node.tag != _SEQ:
            raise self._refuse(node, _misplaced(node.tag, "a sequence"))
        return node

    def compose_mapping_node(self, anchor: Any) -> MappingNode:
        node = super().compose_mapping_node(anchor)
        if node.tag != _MAP:
            raise self._refuse(node, _misplaced(node.tag, "a mapping"))
        seen: set[str] = set()
        for key_node, _value in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            if key_node.value in seen:
                key = _dotted([*self._path, str(key_node.value)])
                raise ComposerError(None, None, f"duplicate key {key}", key_node.start_mark)
            seen.add(key_node.value)
        return node


def _short(tag: str) -> str:
    return tag.replace(_Y, "!!") if tag.startswith(_Y) else tag


def _check_scalar(loader: _Loader, node: ScalarNode, *, explicit: bool, key: bool) -> None:
    """Refuse a scalar whose tag is not JSON's or cannot hold its value (``explicit``: the tag
    was written, not resolved); make an integer out of int64 and uint64 a float, as Go's YAML
    decoder does; refuse what no JSON number is. ``<<`` is a merge only as a mapping's key."""
    tag, text = node.tag, node.value
    if tag == _MERGE and not key:
        if explicit:
            raise loader._refuse(node, "YAML tag !!merge on a value")
        node.tag = _STR
        return
    if tag in (_STR, _MERGE):
        return
    checked = tag in (_BOOL, _NULL) or (tag == _INT and explicit)
    if checked and not _RESOLVED[tag].match(text):
        raise loader._refuse(node, f"{_short(tag)} {_quoted(text)} is not {_A[tag]}")
    if tag == _INT:
        _check_int(loader, node)
    elif tag == _FLOAT:
        if explicit and not (_RESOLVED[_FLOAT].match(text) or _NUMBER_TEXT.fullmatch(text)):
            raise loader._refuse(node, f"!!float {_quoted(text)} is not a number")
        if len(text) > MAX_NUMBER_TEXT:
            raise loader._refuse(node, f"the number {_quoted(text)} is out of range")
        if not math.isfinite(_float(text)):
            raise loader._refuse(node, f"{_quoted(text)}: JSON has no infinite or NaN numbers")
    elif tag not in (_BOOL, _NULL):
        raise loader._refuse(node, _misplaced(tag, "a scalar"))


def _misplaced(tag: str, what: str) -> str:
    if tag in (_STR, _INT, _FLOAT, _BOOL, _NULL, _SEQ, _MAP):
        return f"YAML tag {_short(tag)} on {what}"
    return f"unsupported YAML tag {_short(tag)} (only JSON data is read)"


def _check_int(loader: _Loader, node: ScalarNode) -> None:
    text = node.value
    if len(text) > MAX_NUMBER_TEXT:
        raise loader._refuse(node, f"the number {_quoted(text)} is out of range")
    if text.lstrip("+-").startswith(("0x", "0b")) and len(text) > _MAX_BASE_2_TEXT:
        raise loader._refuse(node, f"the number {_quoted(text)} is out of range")


def _float(text: str) -> float:
    value = text.replace("_", "").lower()
    if value.lstrip("+-") in (".inf", ".nan"):
        return math.inf
    if ":" in value:  # YAML 1.1 base 60: finite whatever its digits
        return 0.0
    return float(value)


def _quoted(text: str) -> str:
    if len(text) <= 40:
        return '"' + " ".join(text.split()) + '"'
    return '"' + " ".join(f"{text[:20]}...{text[-8:]}".split()) + f'" ({len(text)} characters)'


def _dotted(path: list[str]) -> str:
    return "".join(p if p.startswith("[") or i == 0 else "." + p for i, p in enumerate(path))


def _key_text(node: Any) -> str:
    return str(node.value) if isinstance(node, ScalarNode) else "?"


def _expanded_size(root: Node) -> int:
    """Nodes the document has once every alias is expanded (aliases share their node)."""
    sizes: dict[int, int] = {}
    order: list[Node] = []
    stack = [root]
    while stack:  # children before parents, each node once
        node = stack.pop()
        if id(node) in sizes:
            continue
        sizes[id(node)] = 0
        order.append(node)
        stack.extend(_children(node))
    for node in reversed(order):
        sizes[id(node)] = 1 + sum(sizes[id(c)] for c in _children(node))
    return sizes[id(root)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def load_all(
    text: str | bytes, source: str = "<input>", *, max_bytes: int = MAX_BYTES
) -> list[Any]:
    """Every non-empty document of ``text``; raises :class:`YamlError`."""
    size = len(text.encode() if isinstance(text, str) else text)
    if size > max_bytes:
        raise YamlError(source, f"is {size} bytes; at most {max_bytes} are read")
    docs: list[Any] = []
    loader: _Loader | None = None
    try:
        loader = _Loader(text)
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            if _expanded_size(node) > MAX_EXPANDED_NODES:
                raise YamlError(
                    source,
                    f"aliases expand to more than {MAX_EXPANDED_NODES} nodes; "
                    "refusing what looks like an alias bomb",
                )
            data = loader.construct_document(node)
            if data is not None:
                docs.append(data)
    except _Refused as exc:
        at = exc.problem_mark
        line, column = (at.line + 1, at.column + 1) if at is not None else (None, None)
        raise YamlError(source, f"{exc.path}: {exc.problem}", line, column, path=exc.path) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = f"invalid YAML: {_one_line(', '.join(p for p in (exc.context, exc.problem) if p))}"
        if mark is None:
            raise YamlError(source, what) from None
        raise YamlError(source, what, mark.line + 1, mark.column + 1) from None
    except yaml.reader.ReaderError as exc:
        what = f"not {exc.encoding} text" if exc.encoding else "invalid YAML"
        raise YamlError(source, f"{what}: {_one_line(exc.reason)} at {exc.position}") from None
    except yaml.YAMLError as exc:
        raise YamlError(source, f"invalid YAML: {_one_line(str(exc))}") from None
    finally:
        if loader is not None:
            loader.dispose()
    return docs


def _one_line(text: str) -> str:
    return " ".join(text.split())


def locate(
    text: str | bytes, document: int, paths: Sequence[Sequence[str | int]]
) -> list[tuple[int, int] | None]:
    """Where each of ``paths`` stands in the ``document``-th non-empty document of ``text``
    (counted from 0, as :func:`load_all` returns them): ``(line, column)`` from 1 of the key that
    holds it (of the item, in a list), or of its deepest ancestor present when it is missing (a
    required field points at the object that lacks it). ``None`` when the text does not load.

    Positions are found by composing the YAML again, so loading keeps no marks and pays
    nothing; a caller asks only when it reports errors. Only text :func:`load_all` accepted is
    located, so it is composed by libyaml when PyYAML has it (the bounds already held), and the
    documents of the last text located are kept for the next question about it."""
    roots = _roots(text)
    if roots is None or not 0 <= document < len(roots):
        return [None] * len(paths)
    return [_walk(roots[document], path) for path in paths]


_COMPOSED: list[tuple[str | bytes, list[Node] | None]] = []


def _roots(text: str | bytes) -> list[Node] | None:
    if _COMPOSED and _COMPOSED[0][0] is text:
        return _COMPOSED[0][1]
    loader_class: Any = getattr(yaml, "CSafeLoader", None) or _Loader
    loader = loader_class(text)
    found: list[Node] = []
    roots: list[Node] | None = found
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None and not _is_null(node):
                found.append(node)
    except (yaml.YAMLError, RecursionError):
        roots = None
    finally:
        loader.dispose()
    _COMPOSED[:] = [(text, roots)]
    return roots


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _walk(node: Node, path: Sequence[str | int]) -> tuple[int, int]:
    mark = node.start_mark
    for part in path:
        child: Node | None = None
        if isinstance(node, MappingNode) and isinstance(part, str):
            for key, value in node.value:
                if isinstance(key, ScalarNode) and key.value == part:
                    mark, child = key.start_mark, value
                    break
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
            mark = child.start_mark
        if child is None:
            break
        node = child
    return mark.line + 1, mark.column + 1
