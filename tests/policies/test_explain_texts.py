"""`policy explain` says what the rule does: every configuration key a rule's description or
remediation names exists in the configuration model, so a renamed or removed setting cannot leave an
explanation that sends a user to a key stockade ignores (issue 22)."""

from __future__ import annotations

import re
import typing
from typing import Any

from pydantic import BaseModel

from stockade.policies.config.settings import Config
from stockade.policies.engines.library import load_library

#: dotted names that look like configuration but are Kubernetes fields of the pod spec
POD_FIELDS = ("resources.limits", "resources.requests")


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside X, tuple[X, ...], dict[str, X] or X | None; None for a leaf."""
    for _ in range(4):
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return annotation
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis and a is not type(None)]
        if not args:
            return None
        annotation = args[-1]
    return None


def resolves(parts: list[str]) -> bool:
    model: type[BaseModel] | None = Config
    for i, part in enumerate(parts):
        if model is None:
            return False
        field = model.model_fields.get(part)
        if field is None:
            return False
        model = _model_of(field.annotation)
        if model is None:
            return i == len(parts) - 1
    return True


def references() -> list[tuple[str, str]]:
    # whole tokens (not inside input.facts.x), then only plain dotted names of a configuration section:
    # not label keys (azure.workload.identity/use), domains or file names
    token = re.compile(r"(?<![\w./-])[\w./-]+")
    dotted = re.compile(r"(?:" + "|".join(Config.model_fields) + r")(?:\.[a-z_]+)+")
    out = []
    for rule in load_library().rules.values():
        for m in token.finditer(f"{rule.description}\n{rule.remediation}"):
            name = m.group(0).rstrip(".")
            if not dotted.fullmatch(name) or name.endswith(".py") or name.startswith(POD_FIELDS):
                continue
            out.append((rule.id, name))
    return out


def test_every_configuration_key_an_explanation_names_exists() -> None:
    refs = references()
    assert len(refs) >= 30  # the check looks at something
    assert [r for r in refs if not resolves(r[1].split("."))] == []


def test_the_check_catches_a_key_that_does_not_exist() -> None:
    assert resolves(["egress", "metadata_ports"]) and resolves(["egress", "cluster_dns", "addresses"])
    assert not resolves(["egress", "metadata_port"]) and not resolves(["egress", "cluster_dns", "address"])
