"""YAML documents with their node positions, read by the one decoder
(:mod:`stockade.policies.decoding.decode`).

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

from stockade.policies.decoding.decode import DecodeError, compose, documents, key_string
from stockade.policies.model import JSONPath, LineLocator

#: A document Kubernetes would not read, or that is not YAML, with the 1-based line of the problem.
YAMLSyntaxError = DecodeError
#: Where one document is in its file (see :func:`span_of`): its first line (0-based), and the
#: characters from its root node's start to its end.
Span = tuple[int, int, int]
#: YAML's line breaks, as libyaml counts lines
_BREAKS = "\r\n\x85\u2028\u2029"


@dataclass(slots=True)
class NodeLocator(LineLocator):
    """Maps a JSON path to the 1-based line of the deepest node on that path that exists."""

    node: yaml.Node
    #: lines before the text the node was composed from (a document composed on its own)
    offset: int = 0

    def line_of(self, path: JSONPath) -> int | None:
        node = self.node
        line = node.start_mark.line + 1
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
            line = node.start_mark.line + 1
        return line + self.offset


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
    for value, node in documents(text):
        yield value, (NodeLocator(node) if node is not None else None)


def compose_documents(text: str) -> list[yaml.Node | None]:
    """The node tree of every document, without constructing values (about half the cost of a load)."""
    return list(compose(text))


def span_of(node: yaml.Node) -> Span:
    """Where a document's root node is: its first line, and its characters [start, end)."""
    return node.start_mark.line, node.start_mark.index, node.end_mark.index


@dataclass(slots=True)
class LazyFileLocator(LineLocator):
    """Positions for one document of a file, composed only when first asked for.

    Keeping every document's node tree from the first parse would cost memory in proportion to the
    whole tree scanned and make the garbage collector walk millions of nodes; instead the file's
    text is kept and the document is composed again on demand, which only documents with findings
    pay for. JSON files use the same path: JSON is YAML as far as positions go (a file YAML cannot
    read gives None).
    """

    file: LazyFile
    document: int
    #: the document's lines, when the first parse recorded them: only those are composed again
    span: Span | None = None

    def line_of(self, path: JSONPath) -> int | None:
        found = self.file.document(self.document, self.span)
        return NodeLocator(found[0], found[1]).line_of(path) if found is not None else None


class LazyFile:
    """A file's text and, while it is being reported on, node trees of its documents.

    Only the most recently used file keeps its nodes: findings are resolved in file order, so one
    slot bounds memory to one file's nodes without composing any document twice in a normal scan.
    A document whose span is known is composed from its own lines, so a file of many documents of
    which one has findings costs that one document, not the file.
    """

    __slots__ = ("_directives", "_docs", "_nodes", "spans", "text")
    _current: LazyFile | None = None

    def __init__(self, text: str) -> None:
        self.text = text
        #: document index -> its span, recorded by :func:`iter_lazy_documents`
        self.spans: dict[int, Span] = {}
        self._nodes: list[yaml.Node | None] | None = None
        self._docs: dict[int, tuple[yaml.Node, int] | None] = {}
        self._directives: bool | None = None

    def _use(self) -> None:
        previous, LazyFile._current = LazyFile._current, self
        if previous is not None and previous is not self:
            previous._nodes = None
            previous._docs = {}

    def nodes(self) -> list[yaml.Node | None]:
        """Every document's node tree (the whole file composed)."""
        if self._nodes is None:
            try:
                self._nodes = compose_documents(self.text)
            except YAMLSyntaxError:
                self._nodes = []
        self._use()
        return self._nodes

    def document(self, index: int, span: Span | None = None) -> tuple[yaml.Node, int] | None:
        """One document's node tree and the lines before it; composed from the document's own lines
        when its span is known (a document never refers to another: anchors are per document),
        else from the whole file."""
        span = span or self.spans.get(index)
        if index not in self._docs:
            self._docs[index] = self._alone(span) if span is not None and self._nodes is None else None
        self._use()
        found = self._docs[index]
        if found is None:
            nodes = self.nodes()
            node = nodes[index] if index < len(nodes) else None
            found = (node, 0) if node is not None else None
        return found

    def _alone(self, span: Span) -> tuple[yaml.Node, int] | None:
        if self._directives is None:
            # a directive (%YAML, %TAG) changes how the document after it reads: composed whole
            self._directives = self.text.startswith("%") or any(b + "%" in self.text for b in _BREAKS)
        if self._directives:
            return None
        line, start, end = span
        bom = 1 if self.text.startswith("\ufeff") else 0  # libyaml does not count a byte order mark
        start, end = start + bom, end + bom
        node_start = start
        # from the start of the root node's line: its indentation is part of the block structure
        while start > bom and self.text[start - 1] not in _BREAKS:
            start -= 1
        try:
            nodes = compose_documents(self.text[start:end])
        except YAMLSyntaxError:
            return None
        node = nodes[0] if nodes else None
        if node is None or node.start_mark.line != 0 or node.start_mark.index != node_start - start:
            return None  # not where the first parse saw it: the whole file is composed instead
        return node, line

    def locator(self, document: int) -> LazyFileLocator:
        return LazyFileLocator(self, document, self.spans.get(document))


def iter_lazy_documents(
    text: str, *, last_key_wins: bool = False
) -> Iterator[tuple[Any, int, int, LazyFile]]:
    """Yield (value, document index, first line, file) per non-empty document; keep no node trees
    (only each document's span). ``last_key_wins``: Helm's reading of a key written twice
    (:func:`~stockade.policies.decoding.decode.construct`)."""
    lazy = LazyFile(text)
    for index, (value, node) in enumerate(documents(text, last_key_wins=last_key_wins)):
        if node is not None:
            lazy.spans[index] = span_of(node)
            yield value, index, node.start_mark.line + 1, lazy


def load_with_locator(text: str) -> tuple[Any, NodeLocator | None]:
    """Load a single-document YAML file (such as stockade.yaml) with its locator."""
    docs = list(iter_documents(text))
    if not docs:
        return None, None
    if len(docs) > 1:
        raise YAMLSyntaxError("expected one YAML document, found several", None)
    return docs[0]
