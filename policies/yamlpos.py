"""YAML documents with their node positions, read by the one decoder (:mod:`stockade.policies.decode`).

One pass composes each document into nodes and constructs the value (with Kubernetes' YAML
semantics) from those same nodes, so keeping positions costs no second parse. The node tree is kept
only so that a JSON path inside the document can later be mapped to a line, which is needed only
for documents with findings.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from stockade.policies.decode import DecodeError, compose, construct, key_string
from stockade.policies.model import JSONPath, LineLocator

#: A document Kubernetes would not read, or that is not YAML, with the 1-based line of the problem.
YAMLSyntaxError = DecodeError


@dataclass(slots=True)
class NodeLocator(LineLocator):
    """Maps a JSON path to the 1-based line of the deepest node on that path that exists."""

    node: yaml.Node

    def line_of(self, path: JSONPath) -> int | None:
        node = self.node
        line = node.start_mark.line + 1
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
            line = node.start_mark.line + 1
        return line


def _child(node: yaml.Node, part: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and (key.value == part or key_string(key) == part):
                # A scalar points at its key's line: that is where an editor shows the field.
                return value if not isinstance(value, yaml.ScalarNode) else _KeyLine(key, value)
        return None
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]  # type: ignore[no-any-return]
    return None


class _KeyLine(yaml.ScalarNode):
    """A scalar value reported at the line of its key (they differ for block scalars)."""

    def __init__(self, key: yaml.ScalarNode, value: yaml.ScalarNode) -> None:
        super().__init__(value.tag, value.value, key.start_mark, value.end_mark, value.style)


def iter_documents(text: str) -> Iterator[tuple[Any, NodeLocator | None]]:
    """Yield (value, locator) per document; raise YAMLSyntaxError at the first broken one."""
    for value, node in _documents(text, values=True):
        yield value, (NodeLocator(node) if node is not None else None)


def compose_documents(text: str) -> list[yaml.Node | None]:
    """The node tree of every document, without constructing values (about half the cost of a load)."""
    return [node for _, node in _documents(text, values=False)]


@dataclass(slots=True)
class LazyFileLocator(LineLocator):
    """Positions for one document of a file, composed only when first asked for.

    Keeping every document's node tree from the first parse would cost memory in proportion to the
    whole tree scanned and make the garbage collector walk millions of nodes; instead the file's
    text is kept and composed again on demand, which only files with findings pay for. JSON files
    use the same path: JSON is YAML as far as positions go (a file YAML cannot read gives None).
    """

    file: LazyFile
    document: int

    def line_of(self, path: JSONPath) -> int | None:
        nodes = self.file.nodes()
        node = nodes[self.document] if self.document < len(nodes) else None
        return NodeLocator(node).line_of(path) if node is not None else None


class LazyFile:
    """A file's text and, while it is being reported on, its documents' node trees.

    Only the most recently used file keeps its nodes: findings are resolved in file order, so one
    slot bounds memory to one file's nodes without composing any file twice in a normal scan.
    """

    __slots__ = ("_nodes", "text")
    _current: LazyFile | None = None

    def __init__(self, text: str) -> None:
        self.text = text
        self._nodes: list[yaml.Node | None] | None = None

    def nodes(self) -> list[yaml.Node | None]:
        if self._nodes is None:
            try:
                self._nodes = compose_documents(self.text)
            except YAMLSyntaxError:
                self._nodes = []
            previous, LazyFile._current = LazyFile._current, self
            if previous is not None and previous is not self:
                previous._nodes = None
        return self._nodes

    def locator(self, document: int) -> LazyFileLocator:
        return LazyFileLocator(self, document)


def iter_lazy_documents(text: str) -> Iterator[tuple[Any, int, int, LazyFile]]:
    """Yield (value, document index, first line, file) per non-empty document; keep no node trees."""
    lazy = LazyFile(text)
    for index, (value, node) in enumerate(_documents(text, values=True)):
        if node is not None:
            yield value, index, node.start_mark.line + 1, lazy


def _documents(text: str, *, values: bool) -> Iterator[tuple[Any, yaml.Node | None]]:
    for node in compose(text):
        if node is None:
            yield None, None
            continue
        yield (construct(node) if values else None), node


def load_with_locator(text: str) -> tuple[Any, NodeLocator | None]:
    """Load a single-document YAML file (such as stockade.yaml) with its locator."""
    docs = list(iter_documents(text))
    if not docs:
        return None, None
    if len(docs) > 1:
        raise YAMLSyntaxError("expected one YAML document, found several", None)
    return docs[0]
