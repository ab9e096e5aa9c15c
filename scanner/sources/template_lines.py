"""Where a field of an object `helm template` rendered is written in the chart's template file.

A rendered stream's lines exist in no file, so a finding points at the template its `# Source:`
comment names (scanner/sources/render.py). This module finds the line in that template: the
template is read as YAML's block structure (indentation, `key:`, `- ` items) with Go template
actions set aside, and the finding's path is followed down it as far as the template writes it:

- a key the template writes is its line (`image: "{{ .Values.image.repository }}"`);
- a key it does not write is where it comes from: the one action that writes into that mapping
  (`{{- toYaml .Values.securityContext | nindent 12 }}`, a ClusterRole's `{{ include "rules" . }}`),
  else the line of the deepest key it does write;
- a list item is the template's item the rendered one comes from, when that can be told: the one
  item whose literal values (`name: manager`, `verbs: ["get"]`) the rendered item holds, the one
  item of a list nothing else writes into (a `range` over it included), or the item at the same
  position in a list without actions; the one action that writes into the list when no item the
  template writes can be it (a rule an `include` adds beside literal ones); else the list's key;
- a template of several documents (`---`) is matched to the rendered object by its literal kind,
  then name, then order; when that cannot be told, nothing is resolved (line 1, as before).

It never evaluates the template: a line it gives is one the object's field is written at or comes
through. The template is read once per scan (:func:`read_template`), and only for the objects that
have findings (:class:`TemplateLocator` resolves paths when asked).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stockade.policies.decoding.decode import documents
from stockade.policies.model import JSONPath, LineLocator
from stockade.scanner.sources.base import Unreadable, read_text

_ACTION = re.compile(r"\{\{.*?\}\}")
#: an action that writes nothing: control flow, a comment, a definition, a variable
_SILENT = re.compile(
    r"^\{\{-?\s*(?:(?:if|else|end|range|with|define|block|break|continue)\b|/\*|\$\w*\s*:?=)"
)
_INDENT = re.compile(r"\bn?indent\s+(\d+)")
#: `key:` and what follows it: a quoted key, or a plain one (which may start with `-` but not `- `)
_KEY = re.compile(
    r"""^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s'"#{\[\]&*!|>%@`-][^:#]*?|-[^\s:#][^:#]*?)"""
    r"""\s*:(?:\s+(.*))?$"""
)
_BLOCK_SCALAR = re.compile(r"^[|>][-+0-9]*\s*(?:#.*)?$")
#: lines indented further are not read as structure (the walks recurse once per level)
MAX_COLUMN = 400
#: a list of the template compared item by item with a rendered list only up to this many pairs
MAX_PAIRS = 10_000


@dataclass(slots=True, eq=False)
class Node:
    """A mapping key or a list item the template writes at ``line`` (1-based), at ``column``."""

    line: int
    column: int
    key: str | None = None  # None for a list item, and for a key an action writes
    item: bool = False
    value: str = ""  # the text after `key:` (or `- `) on its line
    children: list[Node] = field(default_factory=list, repr=False)
    injections: list[int] = field(default_factory=list)  # lines of actions that write into it
    parsed: tuple[bool, Any] | None = None  # :meth:`literal`, once worked out
    last: int = 0  # the last line the template writes in its block (a key's value, an item)

    def literal(self) -> tuple[bool, Any]:
        """The inline value as the scan's decoder reads it (the rendered object's values were read
        so), when no action is in it."""
        if self.parsed is None:
            self.parsed = (False, None)
            if self.value and "{{" not in self.value and not _BLOCK_SCALAR.match(self.value):
                with contextlib.suppress(ValueError):  # DecodeError is one
                    self.parsed = (True, next((v for v, _ in documents(self.value)), None))
        return self.parsed


@dataclass(slots=True, eq=False)
class Document:
    """One `---`-separated document of a template."""

    root: Node
    kind: str | None = None  # its literal `kind:`, when it writes one
    name: str | None = None  # its literal `metadata.name`
    #: the actions on lines of their own: (line, the column they write at, whether they write)
    actions: list[tuple[int, int, bool]] = field(default_factory=list)


def parse_template(text: str) -> list[Document]:
    """The block structure of a template's documents."""
    documents: list[Document] = []
    root = Node(0, -1)
    stack: list[Node] = [root]
    actions: list[tuple[int, int, bool]] = []
    in_action = False
    scalar_column: int | None = None  # inside a block scalar of a key at this column
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        stripped = line.lstrip(" ")
        column = len(line) - len(stripped)
        if in_action:
            in_action = line.count("}}") < line.count("{{") + 1
            continue
        if not stripped:
            continue
        if scalar_column is not None:
            if column > scalar_column:
                continue
            scalar_column = None
        if line.count("{{") > line.count("}}"):  # an action that goes on over the next lines
            in_action = True
            if stripped.startswith("{{"):
                actions.append(_directive(stack, stripped, column, number))
            continue
        if stripped.startswith("#"):
            continue
        if line == "---" or line.startswith("--- "):
            documents.append(_document(root, actions))
            root = Node(number, -1)
            stack, actions = [root], []
            continue
        if not _ACTION.sub("", stripped).strip():
            actions.append(_directive(stack, stripped, column, number))
            continue
        if stripped.startswith("{{") or column > MAX_COLUMN:
            continue  # content after an action on one line, or nested past reason: not read
        node = _content(stack, stripped, column, number)
        if node is not None and _BLOCK_SCALAR.match(node.value):
            scalar_column = node.column
    documents.append(_document(root, actions))
    return documents


def _directive(stack: list[Node], text: str, column: int, number: int) -> tuple[int, int, bool]:
    """An action on a line of its own: control flow, or something that writes (an include, a
    toYaml) into the mapping its indentation (`nindent N`, else its own column) places it in."""
    indent = _INDENT.search(text)
    at = int(indent.group(1)) if indent else column
    writes = not all(_SILENT.match("{{" + action) for action in text.split("{{")[1:])
    if writes:
        parent = _written_into(stack, at)
        parent.injections.append(number)
    return number, at, writes


def _written_into(stack: list[Node], at: int) -> Node:
    """The mapping or list an action writing at column ``at`` writes into: a key just written with
    no value (`ports:` then `{{- toYaml .Values.ports | nindent 8 }}`), the list of items at that
    column (more `env:` items after the written ones), else the innermost node left of it."""
    top = stack[-1]
    if top.key is not None and not top.value and not top.children and at >= top.column:
        return top
    for index in range(len(stack) - 1, 0, -1):
        node = stack[index]
        if node.item and node.column == at:
            return stack[index - 1]
        if node.column < at:
            return node
    return stack[0]


def _content(stack: list[Node], text: str, column: int, number: int) -> Node | None:
    """A line the template writes as YAML: list items (`- `) and a key, or a scalar item."""
    made: Node | None = None
    while text == "-" or text.startswith("- "):
        item = Node(number, column, item=True)
        _attach(stack, item)
        rest = text[1:].lstrip(" ")
        column += len(text) - len(rest)
        text = rest
        made = item
        if not text:
            return item
    match = _KEY.match(text)
    if match is None:
        if made is not None:
            made.value = text
        return made  # a scalar item, or a line that goes on a scalar above: no structure
    key = match.group(1)
    if key[0] in "\"'":
        try:
            key = next((v for v, _ in documents(key)), None)
        except ValueError:  # DecodeError is one
            key = None
    node = Node(number, column, key=key if isinstance(key, str) and "{{" not in key else None)
    node.value = (match.group(2) or "").strip()
    _attach(stack, node)
    return node


def _attach(stack: list[Node], node: Node) -> None:
    while len(stack) > 1:
        top = stack[-1]
        if node.item:
            # an item at its key's column is that key's (a compact list); items end at the next one
            if top.column > node.column or (top.column == node.column and (top.item or top.value)):
                stack.pop()
                continue
        elif top.column >= node.column:
            stack.pop()
            continue
        break
    stack[-1].children.append(node)
    stack.append(node)
    for open_node in stack:
        open_node.last = node.line


def _document(root: Node, actions: list[tuple[int, int, bool]]) -> Document:
    kind = _child(root, "kind")
    meta = _child(root, "metadata")
    name = _child(meta, "name") if meta is not None else None
    return Document(root, _literal_str(kind), _literal_str(name), actions)


def _child(node: Node, key: str) -> Node | None:
    return next((c for c in node.children if c.key == key), None)


def _literal_str(node: Node | None) -> str | None:
    if node is None:
        return None
    known, value = node.literal()
    return value if known and isinstance(value, str) else None


def document_for(
    documents: Sequence[Document], obj: Mapping[str, Any], ordinal: int, rendered: int
) -> Document | None:
    """The template document a rendered object comes from: the one of its literal kind (or the one
    whose kind an action writes), else the one of that kind and name, else the one whose literal
    values the object holds (the most of them, where one holds all another does), else by order
    when the template rendered as many objects of the kind (``rendered``) as it has documents of it
    (``ordinal``: this object's place among them). None when that cannot be told."""
    kind = obj.get("kind")
    md = obj.get("metadata")
    name = md.get("name") if isinstance(md, Mapping) else None
    written = [d for d in documents if d.root.children]
    same = [d for d in written if d.kind == kind] or [d for d in written if d.kind is None]
    if len(same) == 1:
        return same[0]
    named = [d for d in same if d.name is not None and d.name == name]
    if len(named) == 1:
        return named[0]
    scored = [(score[0], d) for d in same if (score := _score(d.root, obj))[1] == 0]
    if len(scored) == 1:
        return scored[0][1]
    best = max((matches for matches, _ in scored), default=0)
    if best and sum(1 for matches, _ in scored if matches == best) == 1:
        return next(d for matches, d in scored if matches == best)
    if same and len(same) == rendered and ordinal < len(same):
        return same[ordinal]
    return None


def line_in(document: Document, path: JSONPath, obj: Any) -> int:
    """The line of ``document`` that writes ``path`` of the rendered ``obj``, or where it comes from:
    a field the object holds that the template does not write comes from the one action that
    writes into its mapping or list, if there is one; a field it does not hold (a setting a rule
    finds missing) is at the deepest key the template writes on its path."""
    node = document.root
    line = document.root.children[0].line if document.root.children else 1
    value: Any = obj
    for segment in path:
        if isinstance(segment, str):
            held = isinstance(value, Mapping) and segment in value
            child = _child(node, segment)
            value = value[segment] if held else None
        else:
            held = isinstance(value, list) and 0 <= segment < len(value)
            value = value[segment] if held else None
            items = [c for c in node.children if c.item]
            child = _item(document, node, items, segment, value)
            if child is None and items:
                if held and len(node.injections) == 1 and not any(_fits(i, value) for i in items):
                    return node.injections[0]  # no item the template writes is it: the one action's
                return line  # the template writes items, and this is not one it can tell
        if child is None:
            return node.injections[0] if held and len(node.injections) == 1 else line
        node, line = child, child.line
    return line


def _item(document: Document, node: Node, items: list[Node], index: int, rendered: Any) -> Node | None:
    """The template's item of ``node``'s list (its ``items``) that the rendered item at ``index``
    comes from."""
    if not items:
        return None
    fits = [i for i in items if _fits(i, rendered)]
    if not fits:
        return None
    evidenced = [i for i in fits if _evidence(i, rendered)]
    if len(evidenced) == 1:
        return evidenced[0]
    # the actions between the list's items (not inside one): an `if` around an item leaves the
    # position of the items after it open, and one that writes at the items' column or left of it
    # (`{{- toYaml .Values.extraContainers | nindent 8 }}`) may write items of its own
    end = node.last if node.children else node.line
    between = [
        (line, at, writes)
        for line, at, writes in document.actions
        if node.line < line <= end + 1 and not any(i.line < line <= i.last for i in items)
    ]
    if len(items) == 1 and not any(writes and at <= items[0].column for _, at, writes in between):
        return items[0]  # the one item (a `range` over it included), and nothing else writes the list
    if (
        index < len(items)
        and items[index] in fits
        and not any(line < items[index].line for line, _, _ in between)
    ):
        return items[index]  # no action before it in the list: the items before it are all written
    return None


def _fits(item: Node, rendered: Any) -> bool:
    """Whether the rendered item holds every literal value the template's item writes."""
    return _score(item, rendered)[1] == 0


def _evidence(item: Node, rendered: Any) -> bool:
    """Whether the template's item writes literal values, all of which the rendered item holds (a
    name, verbs)."""
    matches, misses = _score(item, rendered)
    return matches > 0 and misses == 0


def _score(node: Node, value: Any) -> tuple[int, int]:
    """How many of the literal values the template writes under ``node`` the rendered ``value``
    holds, and how many it holds otherwise. What the rendered value lacks counts neither way: an
    `if` may have left it out. A key written twice (in the two branches of an `if`) holds where
    either does; a literal list item counts once, where a rendered item holds it whole (lists are
    compared as sets: actions add and drop items)."""
    if not node.children:
        known, literal = node.literal()
        if not known:
            return 0, 0
        return (1, 0) if value == literal else (0, 1)
    if all(c.item and not c.children for c in node.children):
        listed = [c.literal() for c in node.children]
        if all(known for known, _ in listed):  # a block list of literal scalars: compared whole
            same = isinstance(value, list) and sorted(map(repr, value)) == sorted(repr(v) for _, v in listed)
            return (1, 0) if same else (0, 1)
    matches = misses = 0
    branches: dict[str, list[tuple[int, int]]] = {}
    pairs = len(node.children) * len(value) if isinstance(value, list) else 0
    for child in node.children:
        if child.item and pairs <= MAX_PAIRS:
            if (
                isinstance(value, list)
                and any(_score(child, v)[1] == 0 for v in value)
                and _has_literal(child)
            ):
                matches += 1
        elif child.key is not None and isinstance(value, Mapping) and child.key in value:
            branches.setdefault(child.key, []).append(_score(child, value[child.key]))
    for scores in branches.values():
        m, x = min(scores, key=lambda score: (score[1], -score[0]))
        matches, misses = matches + m, misses + x
    return matches, misses


def _has_literal(node: Node) -> bool:
    return node.literal()[0] if not node.children else any(_has_literal(c) for c in node.children)


def read_template(path: Path) -> list[Document] | None:
    """A template file's documents; None when it cannot be read (a chart packed as an archive)."""
    try:
        return parse_template(read_text(path))
    except (Unreadable, UnicodeDecodeError):
        return None


@dataclass(slots=True)
class TemplateLocator(LineLocator):
    """Lines of a rendered object's fields in the template document it came from."""

    document: Document
    obj: Any = field(repr=False)

    def line_of(self, path: JSONPath) -> int | None:
        return line_in(self.document, path, self.obj)
