"""YAML parsing that keeps node positions, with PyYAML's C loader.

One pass composes each document into nodes and constructs the Python value from those same nodes,
so keeping positions costs no second parse. The node tree is kept only so that a JSON path inside
the document can later be mapped to a line, which is needed only for documents with findings.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from stockade.policies.model import JSONPath, LineLocator

try:
    _Loader: type[Any] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader


class YAMLSyntaxError(ValueError):
    """A document that is not valid YAML, with the 1-based line of the problem."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


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
            if isinstance(key, yaml.ScalarNode) and key.value == part:
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
    for value, node in _documents(text, construct=True):
        yield value, (NodeLocator(node) if node is not None else None)


def compose_documents(text: str) -> list[yaml.Node | None]:
    """The node tree of every document, without constructing values (about half the cost of a load)."""
    return [node for _, node in _documents(text, construct=False)]


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
    for index, (value, node) in enumerate(_documents(text, construct=True)):
        if node is not None:
            yield value, index, node.start_mark.line + 1, lazy


def _documents(text: str, *, construct: bool) -> Iterator[tuple[Any, yaml.Node | None]]:
    loader = _Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                yield None, None
                continue
            yield (loader.construct_document(node) if construct else None), node
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark is not None and mark is not None and mark.index >= len(text.rstrip()):
            mark = exc.context_mark  # "unexpected end of input": where the open construct began helps more
        line = mark.line + 1 if mark is not None else None
        raise YAMLSyntaxError(_one_line(exc), line) from None
    except yaml.YAMLError as exc:
        raise YAMLSyntaxError(_one_line(exc), None) from None
    finally:
        loader.dispose()


def _one_line(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        return "invalid YAML: " + ", ".join(parts)
    return "invalid YAML: " + " ".join(str(exc).split())


def load_with_locator(text: str) -> tuple[Any, NodeLocator | None]:
    """Load a single-document YAML file (such as stockade.yaml) with its locator."""
    docs = list(iter_documents(text))
    if not docs:
        return None, None
    if len(docs) > 1:
        raise YAMLSyntaxError("expected one YAML document, found several", None)
    return docs[0]
