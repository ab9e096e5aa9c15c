"""Kubernetes objects from YAML/JSON files, directories and stdin, with line numbers.

A file that cannot be read or parsed becomes an :class:`InputError` naming ``path:line`` and the
other files are still read. Documents that are not Kubernetes objects (no ``apiVersion``/``kind``,
such as a Helm ``values.yaml`` in the same tree) are skipped, and ``kind: List`` (and ``*List``)
objects are expanded into their items.

Listing files (:meth:`FileSource.targets`) and reading one file (:func:`read_file`) are separate so
that the scan can read files in worker processes.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from stockade.policies.model import InputError, JSONPath, Origin, Resource, format_path
from stockade.policies.shape import problems
from stockade.policies.yamlpos import LazyFile, YAMLSyntaxError, iter_lazy_documents
from stockade.scanner.sources.base import Item
from stockade.scanner.sources.iac import iac_resources

DEFAULT_INCLUDE = ("*.yaml", "*.yml", "*.json")
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", "node_modules", ".venv", "__pycache__")
STDIN = "-"


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

    def targets(self) -> Iterator[Path | InputError]:
        """The files to read, in a stable order (directories sorted), and missing paths as errors."""
        for name in self.paths:
            path = Path(name)
            if name == STDIN:
                continue
            if path.is_dir():
                yield from self._walk(path)
            elif path.exists():
                yield path  # a file named explicitly is read whatever its suffix
            else:
                yield InputError(name, "no such file or directory")

    def stdin_items(self) -> Iterator[Item]:
        if STDIN in self.paths:
            text = self._stdin_text if self._stdin_text is not None else sys.stdin.read()
            self.files_read += 1
            yield from parse_text(text, "<stdin>")

    def __iter__(self) -> Iterator[Item]:
        yield from self.stdin_items()
        for target in self.targets():
            if isinstance(target, InputError):
                yield target
            else:
                self.files_read += 1
                yield from read_file(target)

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


def read_file(path: Path) -> list[Item]:
    """Every object of one file, or an error saying why (and where) the file could not be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return [InputError(str(path), "not UTF-8 text")]
    except OSError as exc:
        return [InputError(str(path), f"cannot read: {exc.strerror or exc}")]
    return list(parse_text(text, str(path), json_file=path.suffix.lower() == ".json"))


def parse_text(text: str, name: str, *, json_file: bool = False) -> Iterator[Item]:
    """Parse one file's text into resources (and at most one error, where parsing stopped)."""
    if json_file:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            yield InputError(name, f"invalid JSON: {exc.msg}", exc.lineno)
            return
        lazy = LazyFile(text)
        azure = iac_resources(value, name, lazy)  # ARM templates, Resource Graph exports, terraform plans
        if azure is not None:
            yield from azure
            return
        docs = value if isinstance(value, list) else [value]
        for index, doc in enumerate(docs):
            prefix: JSONPath = (index,) if isinstance(value, list) else ()
            yield from _objects(doc, Origin(file=name, document=0, prefix=prefix, locator=lazy.locator(0)))
        return
    try:
        for doc, index, line, lazy_file in iter_lazy_documents(text):
            origin = Origin(file=name, document=index, line=line, locator=lazy_file.locator(index))
            yield from _objects(doc, origin)
    except YAMLSyntaxError as exc:
        yield InputError(name, exc.message, exc.line)


def _objects(doc: Any, origin: Origin) -> Iterator[Item]:
    if not isinstance(doc, Mapping) or not doc.get("kind") or not doc.get("apiVersion"):
        return  # not a Kubernetes object
    kind = doc["kind"]
    items = doc.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for i, item in enumerate(items):
            # The item's own line is resolved lazily, like every other position.
            prefix = (*origin.prefix, "items", i)
            sub = Origin(origin.file, origin.document, None, prefix, locator=origin.locator)
            if not isinstance(item, Mapping):
                yield InputError(origin.file or "-", f"items[{i}]: not an object", sub.line_of(()))
            elif item.get("kind"):
                yield _checked(dict(item), sub)
        return
    yield _checked(dict(doc), origin)


def _checked(obj: dict[str, Any], origin: Origin) -> Item:
    """The object, or an error naming the first field whose type Kubernetes would refuse."""
    found = problems(obj)
    if not found:
        return Resource(obj, origin)
    path, message = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), Mapping) else None
    what = (
        f"{obj.get('kind')}/{name}"
        if isinstance(name, str) and isinstance(obj.get("kind"), str)
        else "object"
    )
    return InputError(
        origin.file or "-", f"{what}: {format_path(path)}: {message}{more}", origin.line_of(path)
    )
