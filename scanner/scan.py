"""`stockade scan`: manifests in, findings out.

All resources are read first, because a Namespace object in the scanned set supplies the labels
(such as the Pod Security level) for the objects in that namespace. Evaluation then runs in this
process, or in worker processes for large trees: regorus holds the GIL, so threads would not help.
Workers only return violations; decisions (actions, exceptions, line numbers) are made here, so
exception usage is counted once and the YAML position data never crosses a process boundary.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stockade.policies.config import Config
from stockade.policies.engine import RuleEvaluationError
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.model import InputError, Operation, Resource, Violation
from stockade.scanner.result import Result
from stockade.scanner.sources.base import Item

#: below this many objects, starting worker processes costs more than it saves
PARALLEL_THRESHOLD = 400
CHUNK = 200


@dataclass(slots=True)
class ScanOptions:
    config: Config = field(default_factory=Config)
    policy_dirs: Sequence[Path] = ()
    workers: int = 1


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def collect(sources: Iterable[Iterable[Item]]) -> tuple[list[Resource], list[InputError]]:
    resources: list[Resource] = []
    errors: list[InputError] = []
    for source in sources:
        for item in source:
            if isinstance(item, InputError):
                errors.append(item)
            else:
                resources.append(item)
    return resources, errors


def namespaces_of(resources: Iterable[Resource]) -> dict[str, dict[str, Any]]:
    """`input.namespace` for each Namespace object in the scanned set."""
    return {r.name: namespace_info(r.obj, r.name) for r in resources if r.kind == "Namespace"}


def scan(
    resources: list[Resource],
    evaluator: Evaluator,
    options: ScanOptions,
    *,
    version: str,
    errors: Sequence[InputError] = (),
    files: int = 0,
    progress: Callable[[int], None] | None = None,
) -> Result:
    namespaces = namespaces_of(resources)
    todo = [r for r in resources if evaluator.in_scope(r)]
    inputs = [
        (i, r.kind, evaluator.build_input(r, operation=Operation.SCAN, namespace=_ns(r, namespaces)))
        for i, r in enumerate(todo)
    ]
    result = Result(tool_version=version, errors=list(errors), rules=dict(evaluator.rules), files=files)
    for index, outcome in _evaluate(inputs, evaluator, options, progress):
        resource = todo[index]
        if isinstance(outcome, str):
            where = resource.origin.file or resource.ref().display()
            result.errors.append(
                InputError(where, f"{resource.ref().display()}: {outcome}", resource.origin.line)
            )
            continue
        result.findings.extend(evaluator.decide(resource, outcome))
    result.resources = len(todo)
    result.exceptions = evaluator.exceptions.statuses()
    return result


def _ns(resource: Resource, namespaces: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if resource.kind == "Namespace":
        return namespaces[resource.name]
    ns = resource.namespace
    return namespaces.get(ns or "") or namespace_info(None, ns)


Job = tuple[int, str, dict[str, Any]]
Outcome = list[Violation] | str  # violations, or why the engine could not evaluate the object


def _evaluate_one(evaluator: Evaluator, kind: str, inp: dict[str, Any]) -> Outcome:
    try:
        return evaluator.engine.evaluate(kind, inp)
    except RuleEvaluationError as exc:
        return f"rule evaluation failed: {exc}"


def _evaluate(
    inputs: list[Job],
    evaluator: Evaluator,
    options: ScanOptions,
    progress: Callable[[int], None] | None,
) -> Iterable[tuple[int, Outcome]]:
    if options.workers <= 1 or len(inputs) < PARALLEL_THRESHOLD:
        for index, kind, inp in inputs:
            yield index, _evaluate_one(evaluator, kind, inp)
            if progress:
                progress(1)
        return
    chunks = [inputs[i : i + CHUNK] for i in range(0, len(inputs), CHUNK)]
    with ProcessPoolExecutor(
        max_workers=options.workers,
        initializer=_init_worker,
        initargs=(options.config, tuple(options.policy_dirs)),
    ) as pool:
        for done in pool.map(_eval_chunk, chunks):
            yield from done
            if progress:
                progress(len(done))


_worker: Evaluator | None = None


def _init_worker(config: Config, policy_dirs: tuple[Path, ...]) -> None:
    global _worker
    _worker = Evaluator.default(config, policy_dirs)


def _eval_chunk(chunk: list[Job]) -> list[tuple[int, Outcome]]:
    assert _worker is not None, "worker not initialised"
    return [(index, _evaluate_one(_worker, kind, inp)) for index, kind, inp in chunk]
