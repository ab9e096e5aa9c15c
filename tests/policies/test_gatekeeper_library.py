"""The real gatekeeper-library through stockade's Gatekeeper engine (`../shared/corpora/gatekeeper-library`).

1. Every gator suite of the library (`library/**/suite.yaml`: its own templates, constraints and
   samples) passes, as `stockade policy verify` runs it.
2. Every OPA unit test of the library's Rego sources (`src/**/src_test.rego`, true under OPA) is true
   when the sources are loaded as the engine loads templates (policies/gatekeeper.regorus_engine),
   all of them: the last difference (a builtin's type error, undefined in OPA, an error in regorus)
   is guarded by rewrite 7 of policies/rego_rewrite.py.

Skipped on a user's clone, where the corpus is absent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stockade.policies.engine_errors import engine_message
from stockade.policies.gatekeeper import regorus_engine
from stockade.policies.verify import run_suite
from tests.corpora import corpus_path

LIBRARY = corpus_path("gatekeeper-library")
SUITES = sorted((LIBRARY / "library").rglob("suite.yaml")) if LIBRARY.is_dir() else []
SOURCES = sorted((LIBRARY / "src").rglob("src_test.rego")) if LIBRARY.is_dir() else []

pytestmark = pytest.mark.skipif(
    not LIBRARY.is_dir(), reason="corpus not present (a user's clone): gatekeeper-library"
)


def _name(path: Path, base: str) -> str:
    return str(path.parent.relative_to(LIBRARY / base))


@pytest.mark.parametrize("suite", SUITES, ids=[_name(s, "library") for s in SUITES])
def test_gator_suite_passes(suite: Path) -> None:
    results = list(run_suite(suite))
    failed = [f"{r.test}/{r.case}: {r.reason}" for r in results if not r.ok]
    assert results and not failed, "\n".join(failed)


def test_every_gator_case_is_run() -> None:
    cases = sum(len(list(run_suite(s))) for s in SUITES)
    assert len(SUITES) >= 49 and cases >= 270, (len(SUITES), cases)


@pytest.mark.parametrize("test_file", SOURCES, ids=[_name(s, "src") for s in SOURCES])
def test_opa_unit_tests_of_the_sources_pass(test_file: Path) -> None:
    folder = test_file.parent
    modules = [(str(p), p.read_text()) for p in sorted(folder.glob("*.rego"))]
    engine = regorus_engine(modules)
    text = test_file.read_text()
    package = re.search(r"^package\s+([\w.]+)", text, re.M)
    assert package is not None
    names = sorted(set(re.findall(r"^(test_\w+)", text, re.M)))
    assert names
    failed = []
    for name in names:
        try:
            value = json.loads(engine.eval_rule_as_json(f"data.{package.group(1)}.{name}"))
            outcome = "true" if value is True else f"answered {value!r}"
        except Exception as exc:
            outcome = engine_message(exc)
        if outcome != "true":
            failed.append(f"{name}: {outcome}")
    assert not failed, "\n".join(failed)


def test_the_opa_bundle_carries_every_template_as_written() -> None:
    """What regorus loads is rewritten (policies/rego_rewrite.py); what `stockade policy bundle`
    exports for an OPA server is the template's own text, byte for byte."""
    import yaml

    from stockade.policies.bundle import bundle_files
    from stockade.policies.engine import load_library
    from stockade.policies.gatekeeper import Gatekeeper, load_gatekeeper

    templates = {}
    for path in sorted((LIBRARY / "library").rglob("template.yaml")):
        templates.update(load_gatekeeper([path]).templates)
    assert len(templates) >= 49
    library = load_library()
    library.gatekeeper = Gatekeeper(templates=templates)
    files = bundle_files(library, {})
    for kind, template in templates.items():
        doc = yaml.safe_load(Path(template.file).read_text())
        target = doc["spec"]["targets"][0]
        written = target.get("rego") or next(
            c["source"]["rego"] for c in target.get("code", []) if c.get("engine") == "Rego"
        )
        assert files[f"gatekeeper/{kind}/template.rego"].decode() == written, kind
