"""The external test corpora (``../shared/corpora``, see its README), read in one place.

A user's clone has no ``../shared`` beside it: every reader here answers "absent" instead of raising,
so a test module can parametrize over a corpus at collection time and skip when it is missing.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


def corpus_path(name: str) -> Path:
    return CORPORA / name


@cache
def corpus_rows(name: str) -> tuple[dict[str, Any], ...]:
    """The rows of ``name`` (a JSON-lines file), or () when the corpus is not present."""
    path = corpus_path(name)
    if not path.is_file():
        return ()
    with path.open(encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


def requires_corpus(*names: str) -> pytest.MarkDecorator:
    """A skip mark for a test (or a module's ``pytestmark``) that needs these corpus files."""
    missing = [n for n in names if not corpus_path(n).exists()]
    reason = f"corpus not present (a user's clone): {', '.join(missing)}"
    return pytest.mark.skipif(bool(missing), reason=reason)
