"""The webhook waits for its engine process in the event loop (ProcessEngine.evaluate_inputs_async,
decide.evaluate_async): the verdicts are those of the synchronous call, a call cancelled while the
child evaluates never hands its answer to the next call, and a closed engine says so instead of
starting a child nobody would stop. Real child processes, no server: each test is bounded by the
engine's own deadlines and asserts outcomes, never durations."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stockade.admission.decide import evaluate, evaluate_async
from stockade.admission.review import AdmissionReview
from stockade.policies.config.settings import parse_config
from stockade.policies.engines.process import EngineClosed, ProcessEngine
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.model import Origin, Resource
from tests.admission.test_engine_process_text import OBJECTS
from tests.reviews import admission_review

CONFIG = parse_config("admission: {evaluation_timeout_seconds: 60}\n")  # a loaded machine


@pytest.fixture(scope="module")
def isolated() -> Any:
    evaluator = Evaluator.default(CONFIG, isolated=True)
    assert isinstance(evaluator.engine, ProcessEngine)
    yield evaluator
    evaluator.engine.close()


def _rows(findings: list[Any]) -> list[tuple[str, str, tuple[Any, ...], str]]:
    return sorted((f.rule.id, f.action.value, f.path, f.message) for f in findings)


def test_the_event_loop_path_gives_the_synchronous_verdicts(isolated: Evaluator) -> None:
    engine = isolated.engine
    assert isinstance(engine, ProcessEngine)
    facts = InventoryFacts()

    async def both() -> list[tuple[Any, Any]]:
        out = []
        for obj in OBJECTS:
            request = AdmissionReview.model_validate(admission_review(obj, "ml")).request
            out.append(
                (
                    _rows(await evaluate_async(request, isolated, engine, facts)),
                    _rows(evaluate(request, isolated, facts)),
                )
            )
        return out

    pairs = asyncio.run(both())
    assert all(a == b for a, b in pairs)
    assert len({tuple(a) for a, _ in pairs}) > 1  # the objects are told apart


def test_a_call_cancelled_while_the_child_evaluates_replaces_the_child(isolated: Evaluator) -> None:
    """The child's answer to a cancelled call is never read as the next call's answer."""
    engine = isolated.engine
    assert isinstance(engine, ProcessEngine)
    privileged = isolated.inputs(Resource(OBJECTS[1], Origin()))
    clean = isolated.inputs(Resource(OBJECTS[0], Origin()))
    expected = engine.evaluate_inputs(clean)
    assert not any(v.rule.id.startswith("STK-POD") and "rivileged" in v.msg for v in expected)

    async def scenario() -> tuple[int | None, int | None, list[Any]]:
        before = engine.pid
        task = asyncio.create_task(engine.evaluate_inputs_async(privileged))
        for _ in range(100):  # until the input is sent and the loop waits for the answer
            await asyncio.sleep(0)
            if engine._lock.locked():
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        after = engine.pid
        return before, after, await engine.evaluate_inputs_async(clean)

    before, after, found = asyncio.run(scenario())
    assert before is not None and after is not None and before != after
    assert [(v.rule.id, v.msg) for v in found] == [(v.rule.id, v.msg) for v in expected]


def test_a_closed_engine_says_so_and_starts_no_child() -> None:
    evaluator = Evaluator.default(CONFIG, isolated=True)
    engine = evaluator.engine
    assert isinstance(engine, ProcessEngine)
    inputs = evaluator.inputs(Resource(OBJECTS[1], Origin()))
    engine.close()
    with pytest.raises(EngineClosed):
        asyncio.run(engine.evaluate_inputs_async(inputs))
    with pytest.raises(EngineClosed):
        engine.evaluate_inputs(inputs)
    assert engine.pid is None
