"""Rego unit tests, run the way `opa test` runs them, with per-file coverage.

Every rule named ``test_*`` in a loaded module is a test: it passes when it evaluates to true, fails
when it is false or undefined, and errors when evaluation raises. ``todo_test_*`` rules are skipped.
Coverage counts the lines of the policy modules (not the tests) that evaluation touched.
"""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
import regorus

from stockade.policies.config.settings import Config
from stockade.policies.engines.library import Library, PolicyError
from stockade.policies.runtimes.errors import engine_message

Outcome = Literal["pass", "fail", "error"]


@dataclass(frozen=True, slots=True)
class TestCase:
    module: str
    package: str
    name: str
    outcome: Outcome
    seconds: float
    message: str = ""


@dataclass(slots=True)
class FileCoverage:
    path: str
    covered: int
    not_covered: int

    @property
    def percent(self) -> float:
        total = self.covered + self.not_covered
        return 100.0 * self.covered / total if total else 100.0


@dataclass(slots=True)
class TestReport:
    cases: list[TestCase] = field(default_factory=list)
    coverage: list[FileCoverage] = field(default_factory=list)

    @property
    def failed(self) -> list[TestCase]:
        return [c for c in self.cases if c.outcome != "pass"]

    @property
    def total_coverage(self) -> float:
        covered = sum(f.covered for f in self.coverage)
        total = covered + sum(f.not_covered for f in self.coverage)
        return 100.0 * covered / total if total else 100.0


def run_tests(library: Library, *, run: str = "*", config: Config | None = None) -> TestReport:
    """Run every ``test_*`` rule of the library's test modules whose name matches `run`."""
    engine: Any = regorus.Engine()
    for module in library.modules:
        try:
            engine.add_policy(module.path, module.text)
        except Exception as exc:
            raise PolicyError(f"{module.path}: {engine_message(exc)}") from None
    data = (config or Config()).rule_data()
    engine.add_data_json(orjson.dumps({"stockade": {"config": data}}).decode())
    engine.set_enable_coverage(True)
    report = TestReport()
    for module in library.test_modules:
        for name in module.test_names():
            if not fnmatch.fnmatchcase(name, run) and not fnmatch.fnmatchcase(
                f"{module.package}.{name}", run
            ):
                continue
            start = time.perf_counter()
            try:
                value = engine.eval_rule(f"data.{module.package}.{name}")
                outcome: Outcome = "pass" if value is True else "fail"
                message = "" if value is True else f"evaluated to {value!r}"
            except Exception as exc:
                outcome, message = "error", engine_message(exc)
            report.cases.append(
                TestCase(module.path, module.package, name, outcome, time.perf_counter() - start, message)
            )
    policy_files = {m.path for m in library.policy_modules}
    cov = orjson.loads(engine.get_coverage_report_as_json())
    for entry in cov.get("files", []):
        if entry["path"] in policy_files:
            report.coverage.append(
                FileCoverage(entry["path"], len(entry.get("covered", [])), len(entry.get("not_covered", [])))
            )
    report.coverage.sort(key=lambda f: f.path)
    return report
