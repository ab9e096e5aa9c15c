"""Lines of paths in a document composed on its own (from the span the first parse recorded) are the
lines the whole file's composition gives, for every path of every document."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from stockade.policies.decoding.yamlpos import LazyFile, NodeLocator, iter_lazy_documents
from stockade.policies.model import JSONPath

ROOT = Path(__file__).resolve().parents[2]

STREAMS = {
    "separators and comments": (
        "# leading comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: v\n"
        "# trailing comment of the first\n---\n# a comment first\napiVersion: v1\nkind: ConfigMap\n"
        "metadata:\n  name: b\n...\n---\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n"
        "  - name: c\n    image: x\n    args: [a, b]\n"
    ),
    "root on the separator line": "--- !!map\na: 1\nb:\n  - x\n--- {a: {b: [1, 2]}, c: d}\n--- &top\nk: v\n",
    "indented root": "---\n  a: 1\n  b:\n    c: 2\n---\n    - x\n    - y: z\n",
    "block scalars at the end": (
        "a: |\n  line\n  line\n\n\nb: >-\n  folded\n---\nc: |+\n  keep\n\n\n---\nd: e"
    ),
    "no final newline": "a: 1\n---\nb: {c: 2}",
    "CRLF": "a: 1\r\nb:\r\n  c: 2\r\n---\r\nd:\r\n  - e\r\n  - f: g\r\n",
    "CR and NEL breaks": "a: 1\rb:\r  c: 2\r---\rd: x\x85e:\x85  - 1\x85",
    "anchors per document": "a: &x {b: 1}\nc: *x\n---\na: &x [1, 2]\nc: *x\n",
    "a directive": "%YAML 1.1\n---\na: 1\n---\nb:\n  c: 2\n",
    "a tag directive": "%TAG !e! tag:example.com,2000:\n---\na: !e!thing {b: 1}\n",
    "keys Kubernetes converts": "y: 1\n9000: a\n1e6: b\n'quoted': {n: 1}\n---\non: [1]\n",
    "JSON": (
        '{\n  "apiVersion": "v1",\n  "kind": "List",\n'
        '  "items": [\n    {"kind": "Pod", "a": [1,\n 2]}\n  ]\n}\n'
    ),
    "empty documents between": "---\n---\na: 1\n---\n\n---\nb: 2\n",
    "BOM": "\ufeffa: 1\nb:\n  c: 2\n---\nd: 1\n",
}


def paths(node: yaml.Node, prefix: JSONPath = ()) -> Iterator[JSONPath]:
    yield prefix
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                yield from paths(value, (*prefix, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from paths(item, (*prefix, i))


def compare(text: str) -> int:
    """Every path of every document, whole file against the document alone; returns paths compared."""
    documents = list(iter_lazy_documents(text))
    whole = LazyFile(text).nodes()
    compared = 0
    for _, index, _, lazy in documents:
        node = whole[index]
        assert node is not None
        alone = LazyFile(text)
        alone.spans = lazy.spans
        found = alone.document(index)
        assert found is not None
        empty = isinstance(node, yaml.ScalarNode) and node.value == ""  # no text to compose alone
        assert alone._nodes is None or "%" in text or empty, "composed the whole file"
        for path in paths(node):
            expected = NodeLocator(node).line_of(path)
            assert NodeLocator(*found).line_of(path) == expected, (index, path)
            assert lazy.locator(index).line_of(path) == expected, (index, path)
            compared += 1
    return compared


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_a_document_alone_has_the_lines_of_the_whole_file(name: str) -> None:
    assert compare(STREAMS[name]) > 0


def test_the_bundled_manifests_have_the_same_lines() -> None:
    compared = 0
    for path in sorted((ROOT / "examples").rglob("*.yaml")) + sorted((ROOT / "tests").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        try:
            list(iter_lazy_documents(text))
        except Exception:
            continue  # files the tests keep broken on purpose
        compared += compare(text)
    assert compared > 10_000
