"""An OPA bundle of the active library and configuration (`stockade policy bundle`).

Why: a platform that already runs OPA servers (or OPA as a Gatekeeper/Envoy sidecar) can serve
stockade's decisions from them: the bundle holds every policy module, the generated aggregating
modules the gates query (`data.stockade_agg.<kind>.results`), the Gatekeeper templates of the policy
directories, and the configuration the rules read as `data.stockade.config`. `stockade scan --engine
opa --opa-url URL` then asks such a server the same questions the embedded engine answers.

Layout (OPA's bundle format): `.manifest` (revision = SHA-256 of the contents, the roots that the
packages live under, Rego v0 marked per file for Gatekeeper templates written in v0), the `.rego`
files under `stockade/`, `stockade_agg/` and `gatekeeper/`, and `stockade/config/data.json`.
Test modules are left out. The archive is deterministic: same library and config, same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import tarfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from stockade.policies.engines.library import BUNDLED_DIR, Library, agg_name, aggregator, group_by_kind

_V1 = re.compile(r"^import\s+rego\.v1\s*$", re.M)
_PACKAGE = re.compile(r"^package\s+([A-Za-z_][\w.]*)", re.M)


def bundle_files(
    library: Library, config_data: Mapping[str, Any], enabled: set[str] | None = None
) -> dict[str, bytes]:
    """path -> content of every file of the bundle but the manifest."""
    files: dict[str, bytes] = {}
    for module in library.policy_modules:
        path = Path(module.path)
        try:
            rel = "stockade/" + path.resolve().relative_to(BUNDLED_DIR).as_posix()
        except ValueError:  # a --policy-dir module
            rel = f"extra/{hashlib.sha256(module.path.encode()).hexdigest()[:12]}/{path.name}"
        files[rel] = module.text.encode()
    rules = [
        r
        for r in library.rules.values()
        if not library.is_external(r.id) and (enabled is None or r.id in enabled)
    ]
    for kind, kind_rules in group_by_kind(rules).items():
        files[f"stockade_agg/{agg_name(kind)}.rego"] = aggregator(kind, kind_rules).encode()
    for kind, template in sorted(library.gatekeeper.templates.items()):
        if template.unsupported or not template.rego:  # CEL, or external data: nothing OPA can run
            continue
        files[f"gatekeeper/{kind}/template.rego"] = template.rego.encode()
        for i, lib in enumerate(template.libs):
            files[f"gatekeeper/{kind}/lib{i}.rego"] = lib.encode()
    files["stockade/config/data.json"] = orjson.dumps(dict(config_data), option=orjson.OPT_SORT_KEYS)
    return files


def manifest(files: Mapping[str, bytes], version: str) -> dict[str, Any]:
    roots = sorted(
        {
            m.group(1).split(".")[0]
            for path, content in files.items()
            if path.endswith(".rego") and (m := _PACKAGE.search(content.decode())) is not None
        }
    )
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + files[path] + b"\0")
    v0 = {
        path: 0
        for path, content in sorted(files.items())
        if path.startswith("gatekeeper/") and path.endswith(".rego") and not _V1.search(content.decode())
    }
    doc: dict[str, Any] = {
        "revision": digest.hexdigest(),
        "roots": roots,
        "rego_version": 1,
        "metadata": {"generator": "stockade", "stockade_version": version},
    }
    if v0:
        doc["file_rego_versions"] = v0
    return doc


def build_bundle(
    library: Library, config_data: Mapping[str, Any], version: str, enabled: set[str] | None = None
) -> bytes:
    """The bundle as gzipped tar bytes (deterministic: fixed mtimes, owners and order)."""
    files = bundle_files(library, config_data, enabled)
    files[".manifest"] = orjson.dumps(
        manifest(files, version), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
    )
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            info = tarfile.TarInfo(path)
            info.size = len(files[path])
            info.mtime = 0
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(files[path]))
    return gzip.compress(raw.getvalue(), mtime=0)
