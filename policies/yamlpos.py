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
    loader = _Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                yield None, None
                continue
            yield loader.construct_document(node), NodeLocator(node)
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
