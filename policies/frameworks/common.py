"""What the policy frameworks share: reading the policy directories, and label selectors.

The Gatekeeper and ValidatingAdmissionPolicy loaders read the same files (:func:`policy_documents`,
read once per library load), through the one decoder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stockade.policies.decoding.decode import DecodeError, documents


class GatekeeperError(ValueError):
    """A template or constraint that cannot be used; the message names the file and the object."""


def policy_documents(dirs: Sequence[Path]) -> list[tuple[Path, list[dict[str, Any]]]]:
    """The mapping documents of every YAML/JSON file under `dirs` (recursively, in name order), read
    once for every loader of the policy directories (Gatekeeper templates and constraints, VAPs)."""
    out: list[tuple[Path, list[dict[str, Any]]]] = []
    for root in dirs:
        files = [root] if root.is_file() else sorted(p for p in Path(root).rglob("*") if p.is_file())
        out += [(path, read_documents(path)) for path in files if path.suffix in (".yaml", ".yml", ".json")]
    return out


def read_documents(path: Path) -> list[dict[str, Any]]:
    """The mapping documents of a YAML file, read as Kubernetes reads them (the one decoder)."""
    try:
        text = path.read_text(encoding="utf-8")
        docs = [value for value, _ in documents(text)]
    except (OSError, UnicodeDecodeError) as exc:
        raise GatekeeperError(f"{path}: cannot read: {exc}") from None
    except DecodeError as exc:
        where = f"{path}:{exc.line}" if exc.line else str(path)
        raise GatekeeperError(f"{where}: {exc.message}") from None
    return [d for d in docs if isinstance(d, dict)]


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """A Kubernetes LabelSelector (matchLabels and matchExpressions, ANDed)."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True
