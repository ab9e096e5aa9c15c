"""Kubernetes objects from YAML/JSON files, directories and stdin, with line numbers.

A file that cannot be read or parsed becomes an :class:`InputError` naming ``path:line`` and the
other files are still read. Documents that are not Kubernetes objects (no ``apiVersion``/``kind``,
such as a Helm ``values.yaml`` in the same tree) are skipped, and ``kind: List`` (and ``*List``)
objects are expanded into their items.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from stockade.policies.model import InputError, JSONPath, LineLocator, Origin, Resource
from stockade.policies.yamlpos import NodeLocator, YAMLSyntaxError, iter_documents, iter_lazy_documents
from stockade.scanner.sources.base import Item

DEFAULT_INCLUDE = ("*.yaml", "*.yml", "*.json")
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", "node_modules", ".venv", "__pycache__")
STDIN = "-"


@dataclass(slots=True)
class PrefixLocator(LineLocator):
    """A locator for an item of a List: paths inside the item are prefixed with items[i]."""

    inner: LineLocator
    prefix: JSONPath

    def line_of(self, path: JSONPath) -> int | None:
        return self.inner.line_of(self.prefix + tuple(path))


@dataclass(slots=True)
class LazyJSONLocator(LineLocator):
    """Line numbers for a JSON file, computed only if a finding needs one.

    JSON is (nearly) a subset of YAML, so the YAML composer gives positions; if it cannot read the
    file, findings fall back to the document's first line.
    """

    text: str
    document: int = 0
    _node: NodeLocator | None = field(default=None, init=False)
    _failed: bool = field(default=False, init=False)

    def line_of(self, path: JSONPath) -> int | None:
        if self._node is None and not self._failed:
            try:
                docs = list(iter_documents(self.text))
                self._node = docs[self.document][1] if len(docs) > self.document else None
            except YAMLSyntaxError:
                self._node = None
            self._failed = self._node is None
        return self._node.line_of(path) if self._node is not None else None


class FileSource:
    """Reads files and directories (recursively), filtered by include/exclude globs."""

    def __init__(
        self,
        paths: Sequence[str],
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        stdin_text: str | None = None,
    ) -> None:
        self.paths = list(paths)
        self.include = tuple(include) or DEFAULT_INCLUDE
        self.exclude = DEFAULT_EXCLUDE + tuple(exclude)
        self._stdin_text = stdin_text
        self.files_read = 0

    def __iter__(self) -> Iterator[Item]:
        for name in self.paths:
            if name == STDIN:
                text = self._stdin_text if self._stdin_text is not None else sys.stdin.read()
                self.files_read += 1
                yield from parse_text(text, "<stdin>")
                continue
            path = Path(name)
            if path.is_dir():
                for file in self._walk(path):
                    yield from self._read(file)
            elif path.exists():
                yield from self._read(path)  # a file named explicitly is read whatever its suffix
            else:
                yield InputError(name, "no such file or directory")

    def _walk(self, root: Path) -> Iterator[Path]:
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root)
            dirnames[:] = sorted(
                d for d in dirnames if not self._excluded(d, os.path.normpath(os.path.join(rel_dir, d)))
            )
            for fname in sorted(filenames):
                rel = os.path.normpath(os.path.join(rel_dir, fname))
                if self._excluded(fname, rel):
                    continue
                if any(fnmatch.fnmatch(fname, p) or fnmatch.fnmatch(rel, p) for p in self.include):
                    yield Path(dirpath) / fname

    def _excluded(self, name: str, rel: str) -> bool:
        return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in self.exclude)

    def _read(self, path: Path) -> Iterator[Item]:
        self.files_read += 1
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            yield InputError(str(path), "not UTF-8 text")
            return
        except OSError as exc:
            yield InputError(str(path), f"cannot read: {exc.strerror or exc}")
            return
        yield from parse_text(text, str(path), json_file=path.suffix.lower() == ".json")


def parse_text(text: str, name: str, *, json_file: bool = False) -> Iterator[Item]:
    """Parse one file's text into resources (and at most one error, where parsing stopped)."""
    if json_file:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            yield InputError(name, f"invalid JSON: {exc.msg}", exc.lineno)
            return
        docs = value if isinstance(value, list) else [value]
        for index, doc in enumerate(docs):
            prefix: JSONPath = (index,) if isinstance(value, list) else ()
            locator: LineLocator = LazyJSONLocator(text)
            if prefix:
                locator = PrefixLocator(locator, prefix)
            yield from _objects(doc, name, index, locator, 1)
        return
    try:
        for doc, line, lazy_locator in iter_lazy_documents(text):
            yield from _objects(doc, name, lazy_locator.document, lazy_locator, line)
    except YAMLSyntaxError as exc:
        yield InputError(name, exc.message, exc.line)


def _objects(doc: Any, name: str, index: int, locator: LineLocator, line: int) -> Iterator[Item]:
    if not isinstance(doc, Mapping) or not doc.get("kind") or not doc.get("apiVersion"):
        return  # not a Kubernetes object
    kind = str(doc["kind"])
    items = doc.get("items")
    if kind.endswith("List") and isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, Mapping) and item.get("kind"):
                sub = PrefixLocator(locator, ("items", i))
                yield Resource(
                    dict(item), Origin(file=name, document=index, line=sub.line_of(()), locator=sub)
                )
        return
    yield Resource(dict(doc), Origin(file=name, document=index, line=line, locator=locator))
