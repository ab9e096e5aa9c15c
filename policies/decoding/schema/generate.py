"""Regenerate ``kubernetes-types.json``: the field types of the built-in kinds stockade reads, ObjectMeta
and PodSpec (and everything they hold), from the ``kubernetes`` client's models (generated from
Kubernetes' OpenAPI).

    .venv/bin/python -m stockade.policies.decoding.schema.generate \
        > policies/decoding/schema/kubernetes-types.json

A test checks that the committed file is what this prints, so a client upgrade that changes a type
is seen. Type strings are the client's: ``str``, ``int``, ``bool``, ``float``, ``object`` (anything:
IntOrString, RawExtension), ``datetime``, ``List[X]``, ``Dict[str, X]`` or a model name.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

ROOTS = ("V1ObjectMeta", "V1PodSpec", "V1PodTemplateSpec")


def kinds() -> dict[str, str]:
    """group/Kind -> the client's model, for every built-in kind of the kinds table."""
    from kubernetes import client

    from stockade.policies.kinds.api import KINDS

    out = {}
    for info in KINDS.values():
        name = "V1" + info.kind
        if not info.custom and info.version == "v1" and hasattr(client, name):
            out[f"{info.group}/{info.kind}"] = name
    return dict(sorted(out.items()))


def models(roots: list[str]) -> dict[str, dict[str, str]]:
    from kubernetes import client

    out: dict[str, dict[str, str]] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        model: Any = getattr(client, name)
        fields = {model.attribute_map[attr]: kind for attr, kind in sorted(model.openapi_types.items())}
        out[name] = fields
        for kind in fields.values():
            todo.extend(
                m for m in re.findall(r"[A-Z]\w+", kind) if m not in ("List", "Dict") and hasattr(client, m)
            )
    return dict(sorted(out.items()))


def main() -> None:
    from importlib.metadata import version

    by_kind = kinds()
    doc = {
        "source": f"kubernetes (Python client) {version('kubernetes')}",
        "kinds": by_kind,
        "models": models([*ROOTS, *by_kind.values()]),
    }
    sys.stdout.write(json.dumps(doc, indent=1, sort_keys=False) + "\n")


if __name__ == "__main__":
    main()
