"""The real gatekeeper-library through stockade's Gatekeeper engine (`../shared/corpora/gatekeeper-library`).

1. Every gator suite of the library (`library/**/suite.yaml`: its own templates, constraints and
   samples) passes, as `stockade policy verify` runs it.
2. Every OPA unit test of the library's Rego sources (`src/**/src_test.rego`, true under OPA) is true
   when the sources are loaded as the engine loads templates (policies/gatekeeper.regorus_engine),
   all of them: the last difference (a builtin's type error, undefined in OPA, an error in regorus)
   is guarded by rewrite 7 of policies/runtimes/rego_rewrite.py.

3. The same gator suites with the templates' CEL code (K8sNativeValidation, generated from the
   library's `src/**/src.cel`) run instead of their Rego (`load_gatekeeper(prefer="cel")`): the CEL
   engine (policies/runtimes/cel.py) passes exactly the cases the Rego passes. In the gates a template with
   both runs its Rego; a CEL-only template runs its CEL.

Skipped on a user's clone, where the corpus is absent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stockade.policies.frameworks.gatekeeper import load_gatekeeper, regorus_engine
from stockade.policies.frameworks.verify import run_suite
from stockade.policies.runtimes.errors import engine_message
from tests.corpora import corpus_path

LIBRARY = corpus_path("gatekeeper-library")
SUITES = sorted((LIBRARY / "library").rglob("suite.yaml")) if LIBRARY.is_dir() else []
SOURCES = sorted((LIBRARY / "src").rglob("src_test.rego")) if LIBRARY.is_dir() else []

pytestmark = pytest.mark.skipif(
    not LIBRARY.is_dir(), reason="corpus not present (a user's clone): gatekeeper-library"
)


def _name(path: Path, base: str) -> str:
    return str(path.parent.relative_to(LIBRARY / base))


CEL_SUITES = [s for s in SUITES if "K8sNativeValidation" in (s.parent / "template.yaml").read_text()]


@pytest.mark.parametrize("suite", CEL_SUITES, ids=[_name(s, "library") for s in CEL_SUITES])
def test_gator_suite_passes_with_the_templates_cel(suite: Path) -> None:
    gk = load_gatekeeper([suite.parent / "template.yaml"], prefer="cel")
    assert all(t.cel is not None and not t.rego for t in gk.templates.values()), "CEL must be what runs"
    results = list(run_suite(suite, prefer="cel"))
    failed = [f"{r.test}/{r.case}: {r.reason}" for r in results if not r.ok]
    assert results and not failed, "\n".join(failed)
    assert [r.ok for r in results] == [r.ok for r in run_suite(suite)]  # the same cases as the Rego


def test_the_library_has_cel_templates() -> None:
    assert len(CEL_SUITES) >= 16


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
    """What regorus loads is rewritten (policies/runtimes/rego_rewrite.py); what `stockade policy bundle`
    exports for an OPA server is the template's own text, byte for byte."""
    import yaml

    from stockade.policies.engines.bundle import bundle_files
    from stockade.policies.engines.library import load_library
    from stockade.policies.frameworks.gatekeeper import Gatekeeper, load_gatekeeper

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
