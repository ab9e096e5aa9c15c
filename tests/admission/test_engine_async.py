"""The webhook waits for its engine process in the event loop (ProcessEngine.evaluate_inputs_async,
decide.evaluate_async): the verdicts are those of the synchronous call, a call cancelled while the
child evaluates never hands its answer to the next call, and a closed engine says so instead of
starting a child nobody would stop. Real child processes, no server: each test is bounded by the
engine's own deadlines and asserts outcomes, never durations."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
import uvloop

from stockade.admission.decide import evaluate, evaluate_async
from stockade.admission.review import AdmissionReview
from stockade.policies.config.settings import parse_config
from stockade.policies.engines.process import (
    HERE_BYTES,
    PIPELINE_BYTES,
    EngineClosed,
    EvaluationTimeout,
    ProcessEngine,
    _send_frame,
)
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.model import Origin, Resource
from tests.admission.test_engine_process_text import OBJECTS
from tests.admission.test_hostile_clients import SLOW_RULE as SLOW_RULE_OF_THE_WEBHOOK_TESTS
from tests.reviews import admission_review

CONFIG = parse_config("admission: {evaluation_timeout_seconds: 60}\n")  # a loaded machine


@pytest.fixture(scope="module")
def isolated() -> Any:
    """An engine whose every input goes to its child (the pipeline these tests are about)."""
    evaluator = Evaluator.default(CONFIG, isolated=True)
    assert isinstance(evaluator.engine, ProcessEngine)
    evaluator.engine.judge_here = False
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


def test_a_call_cancelled_while_the_child_evaluates_has_its_answer_dropped(isolated: Evaluator) -> None:
    """The child's answer to a cancelled call is never read as the next call's answer."""
    engine = isolated.engine
    assert isinstance(engine, ProcessEngine)
    privileged = isolated.inputs(Resource(OBJECTS[1], Origin()))
    clean = isolated.inputs(Resource(OBJECTS[0], Origin()))
    expected = engine.evaluate_inputs(clean)
    assert [v.rule.id for v in expected] != [v.rule.id for v in engine.evaluate_inputs(privileged)]

    async def scenario() -> list[Any]:
        task = asyncio.create_task(engine.evaluate_inputs_async(privileged))
        for _ in range(100):  # until the input is sent and the loop waits for the answer
            await asyncio.sleep(0)
            if engine._queue:
                break
        assert engine._queue
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await engine.evaluate_inputs_async(clean)

    found = asyncio.run(scenario())
    assert [(v.rule.id, v.msg) for v in found] == [(v.rule.id, v.msg) for v in expected]


def test_concurrent_calls_each_get_their_own_answer(isolated: Evaluator) -> None:
    """Inputs sent while the child evaluates the one before (the pipeline) are answered in order,
    each caller its own verdict, as one at a time."""
    engine = isolated.engine
    assert isinstance(engine, ProcessEngine)
    inputs = [isolated.inputs(Resource(obj, Origin())) for obj in OBJECTS] * 5
    one_at_a_time = [[(v.rule.id, v.msg) for v in engine.evaluate_inputs(i)] for i in inputs]

    async def together() -> list[list[Any]]:
        return list(await asyncio.gather(*(engine.evaluate_inputs_async(i) for i in inputs)))

    assert [[(v.rule.id, v.msg) for v in found] for found in asyncio.run(together())] == one_at_a_time


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_large_inputs_between_small_ones_are_answered_in_order(isolated: Evaluator, loop: str) -> None:
    """Inputs past PIPELINE_BYTES are written from a thread, one in the child at a time, while small
    ones keep flowing: every caller still gets its own verdict. On uvloop too (the webhook's loop),
    which makes the descriptors it watches non-blocking: it watches the child's bell, never the
    pipe the inputs and answers cross (an earlier build's large writes failed there)."""
    engine = isolated.engine
    assert isinstance(engine, ProcessEngine)
    data = {f"k{i:05d}": "x" * 100 for i in range(20_000)}  # 2 MB: past any socket buffer
    data["DB_PASSWORD"] = "hunter2-correct-horse"
    large = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "large", "namespace": "ml"}}
    large["data"] = data
    objects = [OBJECTS[1], large, OBJECTS[0], large, OBJECTS[3], OBJECTS[5]] * 2
    facts = InventoryFacts()
    inputs = [isolated.inputs(Resource(obj, Origin()), source=facts) for obj in objects]
    assert len(orjson.dumps(inputs[1][0][1])) > PIPELINE_BYTES
    one_at_a_time = [[(v.rule.id, v.msg) for v in engine.evaluate_inputs(i)] for i in inputs]

    async def together() -> list[list[Any]]:
        return list(await asyncio.gather(*(engine.evaluate_inputs_async(i) for i in inputs)))

    factory = uvloop.new_event_loop if loop == "uvloop" else None
    with asyncio.Runner(loop_factory=factory) as runner:
        answers = runner.run(together())
    assert [[(v.rule.id, v.msg) for v in found] for found in answers] == one_at_a_time
    assert one_at_a_time[1] != one_at_a_time[2]  # the credential in its env is found


SLOW_RULE = SLOW_RULE_OF_THE_WEBHOOK_TESTS  # minutes of work for a ConfigMap labelled slow: yes


def test_an_input_behind_one_that_times_out_is_sent_again_to_the_next_child(tmp_path: Path) -> None:
    """The child evaluating a slow object is killed at its deadline; the object sent behind it is
    evaluated by the next child, not failed with it."""
    (tmp_path / "slow.rego").write_text(SLOW_RULE)
    config = parse_config("admission: {evaluation_timeout_seconds: 3}\n")
    evaluator = Evaluator.default(config, [tmp_path], isolated=True)
    engine = evaluator.engine
    assert isinstance(engine, ProcessEngine)

    def configmap(name: str, slow: bool) -> list[Any]:
        obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ml", "labels": {"slow": "yes" if slow else "no"}},
        }
        return evaluator.inputs(Resource(obj, Origin()))

    async def scenario() -> tuple[Any, Any]:
        slow = asyncio.create_task(engine.evaluate_inputs_async(configmap("slow", True)))
        await asyncio.sleep(0)
        behind = asyncio.create_task(engine.evaluate_inputs_async(configmap("behind", False)))
        done = await asyncio.gather(slow, behind, return_exceptions=True)
        return done[0], done[1]

    try:
        first = engine.pid
        slow, behind = asyncio.run(scenario())
        assert isinstance(slow, EvaluationTimeout)
        assert behind == []  # evaluated, by another child
        assert engine.pid is not None and engine.pid != first
    finally:
        engine.close()


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


def test_synchronous_calls_read_the_bell_too(isolated: Evaluator) -> None:
    """The child rings its bell after every answer, also those of synchronous calls (an inventory
    load, the evaluation thread): they read the rings, so that the bell's pipe never fills and
    blocks the child (a pipe holds 64 KiB: that many synchronous calls in a row would hang it)."""
    engine = isolated.engine
    assert isinstance(engine, ProcessEngine)
    inputs = isolated.inputs(Resource(OBJECTS[1], Origin()))
    for _ in range(50):
        engine.evaluate_inputs(inputs)
    bell = engine._bell
    assert bell is not None
    pending = os.read(bell.fileno(), 65536) if bell.poll(0.5) else b""
    assert len(pending) <= 2


@pytest.mark.parametrize("size", [0, 10, 16_385, 3 * 1024 * 1024])
def test_a_frame_written_on_a_raw_descriptor_is_what_recv_bytes_reads(size: int) -> None:
    """Large inputs are written on a descriptor of the writer's own (_send_frame): the child reads
    them with multiprocessing's recv_bytes, so the frames must be the same."""
    import multiprocessing
    import threading

    reader, writer = multiprocessing.get_context("spawn").Pipe()
    message = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    sender = threading.Thread(target=_send_frame, args=(writer.fileno(), message))
    sender.start()
    try:
        assert reader.recv_bytes() == message
    finally:
        sender.join(30)
        reader.close()
        writer.close()


def _many_containers(n: int) -> dict[str, Any]:
    containers = [{"name": f"c{i}", "image": f"registry.example.com/ml/c{i}:1"} for i in range(n)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "many", "namespace": "ml"},
        "spec": {"containers": containers},
    }


def test_the_vm_judges_in_the_loop_and_the_child_takes_what_it_does_not_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inputs the compiled VM answers are judged on the loop's thread, with the verdicts of the
    engine in this process; a pod spec past the VM's instruction limit (16 containers), and an input
    past HERE_BYTES, go to the child, which decides them the same way (the interpreter)."""
    evaluator = Evaluator.default(CONFIG, isolated=True)
    here = Evaluator.default(CONFIG)  # the engine in this process: the reference
    engine = evaluator.engine
    assert isinstance(engine, ProcessEngine)
    sent: list[int] = []
    submit = engine._submit

    async def counted(message: bytes, timeout: float, *, large: bool = False) -> Any:
        sent.append(len(message))
        return await submit(message, timeout, large=large)

    monkeypatch.setattr(engine, "_submit", counted)
    big = _many_containers(1)
    big["metadata"]["annotations"] = {"note": "x" * (HERE_BYTES + 1)}
    cases = [(obj, False) for obj in OBJECTS] + [(_many_containers(16), True), (big, True)]
    facts = InventoryFacts()

    async def run() -> list[tuple[Any, Any, bool]]:
        out = []
        for obj, to_child in cases:
            before = len(sent)
            request = AdmissionReview.model_validate(admission_review(obj, "ml")).request
            found = _rows(await evaluate_async(request, evaluator, engine, facts))
            out.append((found, _rows(evaluate(request, here, facts)), (len(sent) > before) is to_child))
        return out

    try:
        results = asyncio.run(run())
    finally:
        engine.close()
    assert all(ok for _, _, ok in results), [ok for _, _, ok in results]
    assert all(a == b for a, b, _ in results)
    assert any(a for a, _, _ in results[-2:])  # the child's verdicts are verdicts


def test_a_program_that_cannot_be_restored_leaves_every_input_to_the_child() -> None:
    """The loop's VM is made from the serialized program, never compiled on the loop's thread: a
    program regorus cannot restore sends every input to the child, which still decides."""
    evaluator = Evaluator.default(CONFIG, isolated=True)
    engine = evaluator.engine
    assert isinstance(engine, ProcessEngine)
    engine._program = b"not a program"
    request = AdmissionReview.model_validate(admission_review(OBJECTS[1], "ml")).request
    try:
        found = asyncio.run(evaluate_async(request, evaluator, engine, InventoryFacts()))
    finally:
        engine.close()
    assert engine._here is None
    assert _rows(found) == _rows(evaluate(request, Evaluator.default(CONFIG), InventoryFacts()))
