"""The embedded engine in a child process, with a deadline: what the webhook evaluates on.

regorus holds the GIL for the whole of an evaluation, so an expensive object evaluated in the
webhook's own process stalls its event loop: no other request is read, and no timeout can fire
until the evaluation ends. Here the engine runs in a child process (one per webhook worker). The
worker's thread waits on a pipe with the GIL released, so the event loop keeps serving; when the
deadline passes, the child is killed (SIGKILL: an evaluation cannot be interrupted any other way)
and a fresh one is started, and the caller gets :class:`EvaluationTimeout`.

The child is started with ``spawn`` (a clean interpreter: the worker has threads, and forking a
process with threads can copy a held lock), builds the same :class:`Evaluator` the worker would
(same config, same policy directories) and answers one batch of inputs per request, so a workload
with several pod specs is one round trip. Measured: a child is ready in about 0.45 s with 64 MB
RSS (docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import gc
import logging
import multiprocessing
import os
import pickle
import select
import struct
import threading
from collections.abc import Iterable, Mapping, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from stockade.policies.config.settings import Config
from stockade.policies.engines.base import RuleEvaluationError, enabled_rules, evaluate_inputs
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import (
    Library,
    PolicyError,
    library_input,
    load_library,
    violations_of,
)
from stockade.policies.kinds.workloads import WORKLOAD_ALIAS
from stockade.policies.model import Violation

log = logging.getLogger("stockade.engine")

#: (rule kind, input): what one evaluation takes (stockade.policies.evaluate.EngineInput)
_Input = tuple[str, dict[str, Any]]


def _settle(future: asyncio.Future[bool], value: bool) -> None:
    if not future.done():
        future.set_result(value)


async def _rung(bell: Connection, timeout: float) -> bool:
    """Whether the child rang ``bell`` (it wrote a message, or exited) within ``timeout`` seconds,
    waited for in the running loop's selector; the rings are read."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[bool] = loop.create_future()
    fd = bell.fileno()
    loop.add_reader(fd, _settle, ready, True)
    timer = loop.call_later(timeout, _settle, ready, False)
    try:
        return await ready
    finally:
        timer.cancel()
        loop.remove_reader(fd)
        _drain(bell)


def _drain(bell: Connection) -> bool:
    """Read the rings there are; False when the child's end is closed (it exited)."""
    try:
        return os.read(bell.fileno(), 65536) != b"" if _readable(bell.fileno()) else True
    except BlockingIOError:
        return True
    except OSError:
        return False


def _readable(fd: int) -> bool:
    """Whether ``fd`` has something to read, or its other end is closed, now: what
    ``Connection.poll(0)`` answers, in one system call (it builds a selector each time)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


#: an input up to this size that the compiled VM alone judges is evaluated on the event loop's own
#: thread, with no round trip to the child (``ProcessEngine._judged_here``): the VM stops every
#: evaluation at its instruction limit (25,000 instructions in this regorus build), so one takes a
#: few milliseconds at most on such an input (bench/vm_bound.py: 3 ms, the slowest of several
#: hundred adversarial pod specs up to 16 KiB); an input it does not answer (past the limit, an
#: "<undefined>" value, a policy directory's rule for the kind) goes to the child, killed on timeout
HERE_BYTES = 16 * 1024
#: inputs in the child at once on the event loop's path: the one it evaluates, and those sent
#: behind it (the webhook's ``admission.max_inflight``, 4 by default, bounds them too)
PIPELINE_DEPTH = 4
#: an input up to this size is written at once, even while the child evaluates others: it fits in
#: the socket's buffer, so the write never waits for the child; a larger one is written from a
#: thread, and only one of them is in the child at a time
PIPELINE_BYTES = 16 * 1024


@dataclasses.dataclass
class _Call:
    message: bytes
    future: asyncio.Future[Any]
    timeout: float
    timer: asyncio.TimerHandle | None = None


class _Requeue(Exception):
    """Sent behind an input whose evaluation killed the child: to be sent again."""


class EvaluationTimeout(Exception):
    """The evaluation did not finish within its deadline; the engine process was replaced."""


class EngineProcessError(Exception):
    """The engine process failed (it died, or could not start); the message names no object value.
    An evaluation error inside a healthy process is a RuleEvaluationError, as it is in-process."""


class EngineClosed(EngineProcessError):
    """The engine was closed (its config was replaced) before this evaluation took its turn."""


# The wire, after the child's first message (a pickled ("ready" | "error", ...)): one buffer each
# way. Parent to child: b"E" + the batch (_batch) when the library's Rego alone judges (no Gatekeeper
# constraint or VAP), b"Q" + the inputs pickled otherwise, or b"I" + pickled (objects, decisive).
# Child to parent: b"R" + the template label + NUL + the compiled VM's own JSON answer, for one pod
# spec's input that the VM alone judges (_compiled_answer: most webhook requests), b"J" + JSON
# violation rows, b"P" + the same rows pickled (constraints' details may hold what JSON would
# change), or b"X" + the error's one-line text. On the library's path an input crosses as the JSON
# text the engine evaluates: serialised once in the parent (orjson), never pickled, parsed or
# serialised again in the child; and the VM's answer is parsed once, in the parent.
_SEP = b"\0"  # never inside JSON text: orjson escapes every control character


def _batch(inputs: Sequence[_Input], *, bundled_only: bool = False) -> bytes:
    """b"E", then a JSON header of each input's (kind, pod template label), then each input's JSON
    text, separated by NUL bytes. ``bundled_only``: only the bundled library reads them, and is given
    nothing it does not read (``library_input``)."""
    header = [(kind, (inp.get("pod") or {}).get("template") or None) for kind, inp in inputs]
    texts = (orjson.dumps(library_input(inp) if bundled_only else inp) for _, inp in inputs)
    return _SEP.join([b"E" + orjson.dumps(header), *texts])


def _evaluate_batch(engine: EmbeddedEngine, payload: bytes) -> list[Violation]:
    """What ``evaluate_inputs(engine, inputs)`` returns for the batch ``_batch(inputs)``: one pod
    spec judged by the library alone is evaluated from its text; anything else is parsed and goes
    through ``evaluate_inputs`` itself."""
    header, *texts = payload.split(_SEP)
    kinds: list[tuple[str, str | None]] = orjson.loads(header)
    if len(kinds) == 1 and kinds[0][0] != WORKLOAD_ALIAS and engine.library_only:
        return _labelled(engine.evaluate_json(kinds[0][0], texts[0].decode(), raw=texts[0]), kinds[0][1])
    return evaluate_inputs(
        engine, [(kind, orjson.loads(text)) for (kind, _), text in zip(kinds, texts, strict=True)]
    )


def _compiled_raw(
    engine: EmbeddedEngine, payload: bytes, *, bounded: bool = False
) -> tuple[str | None, str] | None:
    """For a batch of one pod spec's input that the compiled VM alone judges, (its template label,
    the VM's own JSON answer); None for any other batch. ``bounded``: one VM run only
    (``EmbeddedEngine.compiled_json``), on the event loop's thread."""
    header, _, text = payload.partition(_SEP)
    kinds: list[tuple[str, str | None]] = orjson.loads(header)
    if len(kinds) != 1 or kinds[0][0] == WORKLOAD_ALIAS:
        return None
    raw = engine.compiled_json(kinds[0][0], text.decode(), bounded=bounded, raw=text)
    return None if raw is None else (kinds[0][1], raw)


def _compiled_answer(engine: EmbeddedEngine, payload: bytes) -> bytes | None:
    """The child's answer for what :func:`_compiled_raw` judges: b"R" + the template label (JSON) +
    NUL + the VM's own JSON text, which the parent reads (``_Compiled``) instead of this process
    reading it into violations and writing them again; None for any other batch."""
    found = _compiled_raw(engine, payload)
    return None if found is None else b"R" + orjson.dumps(found[0]) + _SEP + found[1].encode()


def _labelled(found: list[Violation], label: str | None) -> list[Violation]:
    """``found`` as violations of the pod spec ``label`` names (none: the object's only one)."""
    return [dataclasses.replace(v, template=label) for v in found] if label else found


class _Compiled(NamedTuple):
    """An answer of :func:`_compiled_answer`, read: the template label and the VM's results."""

    label: str | None
    results: dict[str, Any]


def _rows(found: list[Violation], exact_json: bool) -> bytes:
    rows = [(v.rule.id, v.msg, v.path, v.details, v.template, v.error, v.unevaluated) for v in found]
    if exact_json:  # the library's rows are JSON through and through (the VM's answer, parsed)
        return b"J" + orjson.dumps(rows)
    return b"P" + pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)


def _child(conn: Connection, bell: Connection, config: Config, policy_dirs: tuple[Path, ...]) -> None:
    """The child's loop: load the library and build the embedded engine, then answer requests until
    the pipe closes. After each message it writes, it rings ``bell`` (a byte on a pipe of its own):
    the parent's event loop watches the bell, not the pipe the messages cross, since an event loop
    may make what it watches non-blocking (uvloop does), and the messages are read and written
    whole, blocking."""
    ring = os.write
    try:
        library = load_library(policy_dirs)
        engine = EmbeddedEngine(library, config.rule_data(), enabled_rules(config, library))
    except Exception as exc:  # reported to the parent, which raises it as a load error
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    gc.freeze()  # the library and the engine live as long as the child: no collection walks them
    conn.send(("ready", None))
    ring(bell.fileno(), b"\0")
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            answer = _compiled_answer(engine, message[1:]) if message[:1] == b"E" else None
            if answer is not None:
                conn.send_bytes(answer)
            elif message[:1] in (b"E", b"Q"):
                # Rules by id (the parent has the same library): pickling each Rule would cost more
                # than the evaluation's round trip.
                found = (
                    _evaluate_batch(engine, message[1:])
                    if message[:1] == b"E"
                    else evaluate_inputs(engine, pickle.loads(message[1:]))
                )
                conn.send_bytes(_rows(found, engine.library_only))
            elif message[:1] == b"I":
                objects, decisive = pickle.loads(message[1:])
                engine.set_inventory(objects, decisive=decisive)
                conn.send_bytes(b"P" + pickle.dumps(None))
        except Exception as exc:
            # The type, and the engine's message (it names rules and Rego, not the object's values).
            conn.send_bytes(b"X" + f"{type(exc).__name__}: {exc}".encode())
        try:
            ring(bell.fileno(), b"\0")
        except OSError:  # the parent is gone
            return


def _send_frame(fd: int, message: bytes) -> None:
    """``Connection.send_bytes`` on a raw descriptor: the same frame (a 4-byte big-endian length,
    then the bytes), which the child's ``recv_bytes`` reads."""
    if len(message) > 0x7FFFFFFF:
        raise ValueError("an engine input of 2 GiB or more")  # bounded far below by the request size
    view = memoryview(struct.pack("!i", len(message)) + message)
    while view:
        view = view[os.write(fd, view) :]


def _decoded(answer: bytes) -> Any:
    """The child's answer: its rows, or the evaluation's own error (the process is fine), raised as
    it is in-process."""
    if answer[:1] == b"X":
        raise RuleEvaluationError(answer[1:].decode(errors="replace"))
    if answer[:1] == b"R":
        label, _, results = answer[1:].partition(_SEP)
        return _Compiled(orjson.loads(label), orjson.loads(results) or {})
    return orjson.loads(answer[1:]) if answer[:1] == b"J" else pickle.loads(answer[1:])


class ProcessEngine:
    """An :class:`~stockade.policies.engines.embedded.Engine` whose evaluations run in a child process.

    ``library`` is loaded here too (rule metadata for decisions); the child compiles it. Every call
    waits at most ``timeout`` seconds. Use it from one thread at a time (the webhook's evaluation
    thread), or from one event loop (:meth:`evaluate_inputs_async`, the webhook's path); :meth:`close`
    stops the child.
    """

    def __init__(self, library: Library, config: Config, policy_dirs: Sequence[Path], timeout: float) -> None:
        self.library = library
        self.config = config
        self.policy_dirs = tuple(Path(p) for p in policy_dirs)
        self.timeout = timeout
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()
        # the event loop's path (evaluate_inputs_async): inputs sent and not yet answered, in order
        self._queue: collections.deque[_Call] = collections.deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sending: asyncio.Lock | None = None  # these three are made in the caller's loop
        self._large: asyncio.Lock | None = None
        self._room: asyncio.Event | None = None
        self._holding = False  # the event loop's path holds _lock (an input is in the child)
        self._closed = False
        self._inventory: tuple[list[Mapping[str, Any]], bool] | None = None
        # The compiled VM for inputs judged on the event loop's thread (_judged_here), made there
        # when first needed from the serialized program (regorus objects belong to the thread that
        # made them): None when the child judges everything (Gatekeeper templates or VAPs).
        self._program: bytes | None = None
        self._here: EmbeddedEngine | None = None
        self._here_loop: asyncio.AbstractEventLoop | None = None  # the loop whose thread made it
        self._proc: Any = None
        self._conn: Connection | None = None
        self._bell: Connection | None = None  # rung by the child after each message (_child)
        self._ready = False
        # Kinds no rule reads need no round trip (the child would answer "nothing" for them): a
        # 3 MiB ConfigMap is not copied to the child when nothing evaluates ConfigMaps.
        self._kinds = {k for r in library.rules.values() for k in r.kinds}
        self._everything = "*" in self._kinds or bool(library.gatekeeper) or bool(library.vap)
        # what the child's EmbeddedEngine.library_only says: its inputs then cross as JSON text
        enabled = enabled_rules(config, library)
        self._library_only = not any(library.is_external(rid) for rid in enabled)
        # no policy directory's rule either: inputs cross without what the bundled rules never read
        self._bundled_only = self._library_only and all(library.is_bundled(rid) for rid in enabled)
        self._start()
        self._await_ready(startup=True)
        #: False: every input goes to the child (the tests of its pipeline set it)
        self.judge_here = True
        if self._library_only:
            # made on this thread (from the program the child has just cached, or compiled again
            # where the cache is not writable) and freed here; only its serialized form crosses
            base = EmbeddedEngine(library, config.rule_data(), enabled)
            self._program = base.serialized_program()
            del base

    # --- the child's life -------------------------------------------------------------------

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        bell, ringer = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(
            target=_child,
            args=(child, ringer, self.config, self.policy_dirs),
            name="stockade-engine",
            daemon=True,
        )
        proc.start()
        child.close()
        ringer.close()
        self._proc, self._conn, self._bell, self._ready = proc, parent, bell, False

    def _await_ready(self, *, startup: bool = False, deadline: float = 60.0) -> None:
        """Wait for the child's first message; at start-up a load error is a PolicyError."""
        if self._ready:
            return
        assert self._conn is not None
        if not self._conn.poll(deadline):
            self._kill()
            raise EngineProcessError(f"the engine process did not start within {deadline:.0f} s")
        self._take_ready(startup=startup)
        if self._inventory is not None:
            self._call(self._inventory_message(), self.timeout)

    def _take_ready(self, *, startup: bool) -> None:
        """Read the child's first message, there to be read: ready, or the error it could not load."""
        assert self._conn is not None
        try:
            status, payload = self._conn.recv()
        except (EOFError, OSError):
            self._kill()
            raise EngineProcessError("the engine process exited while starting") from None
        if status == "error":
            self._kill()
            raise (PolicyError if startup else EngineProcessError)(payload)
        self._ready = True

    def _inventory_message(self) -> bytes:
        return b"I" + pickle.dumps(self._inventory, protocol=pickle.HIGHEST_PROTOCOL)

    def _kill(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._bell is not None:
            self._bell.close()
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
        if self._proc is not None:
            self._proc.join(5)
        self._proc, self._conn, self._bell, self._ready = None, None, None, False

    def _restart(self) -> None:
        self._kill()
        self._start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._kill()
        # regorus objects are freed on the thread that made them: the loop's VM in its loop
        self._program = None
        if self._here is not None:
            if self._here.owner == threading.get_ident():
                self._here = None
            elif self._here_loop is not None:
                with contextlib.suppress(RuntimeError):  # a loop already closed: freed with the process
                    self._here_loop.call_soon_threadsafe(self._release_here)

    def _release_here(self) -> None:
        self._here = None

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else int(self._proc.pid)

    # --- calls --------------------------------------------------------------------------------

    def _call(self, message: bytes, timeout: float) -> Any:
        if self._closed:
            raise EngineClosed("the engine was closed")
        if self._conn is None:
            self._start()
        self._await_ready()
        assert self._conn is not None
        try:
            self._conn.send_bytes(message)
            if not self._conn.poll(timeout):
                self._restart()
                raise EvaluationTimeout(f"policy evaluation exceeded {timeout:g} s")
            answer = self._conn.recv_bytes()
        except (EOFError, OSError, BrokenPipeError):
            self._restart()
            raise EngineProcessError("the engine process died during an evaluation") from None
        if self._bell is not None:
            _drain(self._bell)  # the rings of these answers: never more than a pipe holds
        return _decoded(answer)

    def _message(self, inputs: Sequence[_Input]) -> bytes | None:
        """What the child is sent for one object's inputs; None when no rule reads their kinds."""
        if not self._everything and not any(kind in self._kinds for kind, _ in inputs):
            return None
        if self._library_only:
            try:
                return _batch(inputs, bundled_only=self._bundled_only)
            except TypeError as exc:  # what the child raised when it serialised the input itself
                raise RuleEvaluationError(f"{type(exc).__name__}: {exc}") from None
        return b"Q" + pickle.dumps(list(inputs), protocol=pickle.HIGHEST_PROTOCOL)

    def evaluate_inputs(self, inputs: Sequence[_Input]) -> list[Violation]:
        """The violations of one object (all its pod specs), as ``evaluate_inputs`` computes them."""
        message = self._message(inputs)
        if message is None:
            return []
        with self._lock:
            found = self._call(message, self.timeout)
        return self._violations(found)

    async def evaluate_inputs_async(self, inputs: Sequence[_Input]) -> list[Violation]:
        """:meth:`evaluate_inputs` from an event loop, without a thread (what the webhook does): the
        loop's selector waits for the child's answers, and an input is sent while the child still
        evaluates those before it (up to :data:`PIPELINE_DEPTH`), so that under load the child finds
        its next input waiting instead of sleeping until it is sent. Answers come back in the order
        the inputs were sent; each input's deadline starts when the child starts on it (when the
        answer before it arrives). One large input (past :data:`PIPELINE_BYTES`) is in the child at
        a time, written from a thread while the child reads it, so that small inputs wait behind
        one large evaluation at most and the loop never waits for a write. Exclusive with
        synchronous callers on other threads (an inventory load, a config reload's close), which
        wait until no input is in the child."""
        message = self._message(inputs)
        if message is None:
            return []
        if len(message) <= HERE_BYTES and (found := self._judged_here(message)) is not None:
            return found
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # asyncio's locks belong to the loop they are first waited in
            if self._queue:
                raise RuntimeError("the engine process is in use from another event loop")
            self._loop = loop
            self._sending, self._large, self._room = asyncio.Lock(), asyncio.Lock(), asyncio.Event()
        assert self._large is not None
        while True:
            try:
                if len(message) > PIPELINE_BYTES:
                    async with self._large:  # held until answered: one large input in the child
                        answer = await self._submit(message, self.timeout, large=True)
                        found = await answer
                else:
                    answer = await self._submit(message, self.timeout)
                    found = await answer
                return self._violations(found)
            except _Requeue:
                continue  # sent behind an input that killed its child: sent again, to the next one

    def _judged_here(self, message: bytes) -> list[Violation] | None:
        """The violations of a batch of one pod spec's input that the compiled VM alone judges,
        evaluated on this thread (:data:`HERE_BYTES`); None for any other batch, or when the VM gives
        no answer: the child then judges it."""
        if self._here is None:
            if self._program is None or self._closed or not self.judge_here:
                return None
            config, library, program = self.config, self.library, self._program
            self._program = None
            try:
                self._here = EmbeddedEngine(
                    library, config.rule_data(), enabled_rules(config, library), program=program
                )
            except Exception as exc:  # the child judges everything, as it always could
                log.warning("the engine's program could not be loaded here: %s", type(exc).__name__)
                return None
            self._here_loop = asyncio.get_running_loop()
        elif self._closed or not self.judge_here:
            return None
        found = _compiled_raw(self._here, message[1:], bounded=True) if message[:1] == b"E" else None
        if found is None:
            return None
        label, raw = found  # read here: no answer of the child's to encode and decode
        return self._violations(_Compiled(label, orjson.loads(raw) or {}))

    async def _submit(self, message: bytes, timeout: float, *, large: bool = False) -> asyncio.Future[Any]:
        """Send ``message`` to the child (starting one if there is none) once there is room, and
        return the future of its answer."""
        assert self._sending is not None and self._room is not None
        async with self._sending:  # one sender at a time: inputs reach the child in this order
            while len(self._queue) >= PIPELINE_DEPTH:
                self._room.clear()
                await self._room.wait()
            if self._closed:
                raise EngineClosed("the engine was closed")
            if not self._queue:
                while not self._lock.acquire(blocking=False):  # a synchronous call on another thread
                    await asyncio.sleep(0.001)
                self._holding = True
                try:
                    await self._ready_async(timeout)
                except BaseException:
                    self._holding = False
                    self._lock.release()
                    raise
            loop = asyncio.get_running_loop()
            call = _Call(message, loop.create_future(), timeout)
            self._queue.append(call)
            conn = self._conn
            assert conn is not None
            if len(self._queue) == 1:
                assert self._bell is not None
                _drain(self._bell)  # rings of synchronous calls' answers, read already
                loop.add_reader(self._bell.fileno(), self._on_answer)
                self._arm(call)
            try:
                if large and len(self._queue) > 1:  # taken when the child is done with those before it
                    # on a descriptor of the writer's own: if the child is killed meanwhile, the
                    # connection's is closed and its number may be reused by the next child's pipe
                    fd = os.dup(conn.fileno())
                    try:
                        await asyncio.to_thread(_send_frame, fd, message)
                    finally:
                        os.close(fd)
                else:  # small enough for the socket's buffer, or to an idle child reading it
                    conn.send_bytes(message)
            except OSError:  # the child died, or was killed while the input was written
                if any(c is call for c in self._queue):
                    self._lost(EngineProcessError("the engine process died during an evaluation"))
            return call.future

    async def _ready_async(self, timeout: float) -> None:
        """Start the child if there is none, and wait in the loop until it is ready and has the
        inventory (nothing is in flight: the caller holds the lock)."""
        if self._closed:
            raise EngineClosed("the engine was closed")
        if self._conn is None:
            self._start()
        conn = self._conn
        assert conn is not None
        if not self._ready:
            if not await self._answered(60.0):
                self._kill()
                raise EngineProcessError("the engine process did not start within 60 s")
            self._take_ready(startup=False)
            if self._inventory is not None:
                try:
                    conn.send_bytes(self._inventory_message())
                    answer = conn.recv_bytes() if await self._answered(max(timeout, 10.0)) else None
                except (EOFError, OSError):
                    answer = None
                if answer is None:
                    self._kill()
                    raise EngineProcessError("the engine process could not load the inventory")
                _decoded(answer)

    async def _answered(self, timeout: float) -> bool:
        """Whether a message of the child's is there to read (or it exited) within ``timeout``."""
        assert self._conn is not None and self._bell is not None
        deadline = asyncio.get_running_loop().time() + timeout
        while not _readable(self._conn.fileno()):
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0 or not await _rung(self._bell, left):
                return _readable(self._conn.fileno())
        return True

    def _arm(self, call: _Call) -> None:
        """Start the deadline of the input the child now evaluates."""
        loop = asyncio.get_running_loop()
        call.timer = loop.call_later(call.timeout, self._expired, call)

    def _on_answer(self) -> None:
        """The bell rang: the answers the child wrote, each to the oldest input in flight; or it
        exited."""
        assert self._conn is not None and self._bell is not None
        alive = _drain(self._bell)
        conn = self._conn
        while self._queue:
            try:
                if not _readable(conn.fileno()):
                    break
                answer = conn.recv_bytes()  # written whole before the bell rang
            except (EOFError, OSError):
                alive = False
                break
            call = self._queue.popleft()
            if call.timer is not None:
                call.timer.cancel()
            if not call.future.done():  # a caller that gave up (cancelled) has its answer dropped
                try:
                    call.future.set_result(_decoded(answer))
                except RuleEvaluationError as exc:
                    call.future.set_exception(exc)
            if self._queue:
                self._arm(self._queue[0])
            else:
                self._idle()
        if not alive and self._queue:
            self._lost(EngineProcessError("the engine process died during an evaluation"))

    def _expired(self, call: _Call) -> None:
        if self._queue and self._queue[0] is call:
            self._lost(EvaluationTimeout(f"policy evaluation exceeded {call.timeout:g} s"))

    def _lost(self, error: Exception) -> None:
        """The child overran the oldest input's deadline or died: it is killed (the next input
        starts another), the oldest input fails with ``error``, and the inputs sent behind it are
        sent again by their callers."""
        for i, call in enumerate(self._queue):
            if call.timer is not None:
                call.timer.cancel()
            if not call.future.done():
                call.future.set_exception(error if i == 0 else _Requeue())
        self._queue.clear()
        self._idle()
        self._kill()

    def _idle(self) -> None:
        """Nothing is in flight: stop watching the child, let synchronous callers and senders in."""
        if self._bell is not None:
            asyncio.get_running_loop().remove_reader(self._bell.fileno())
        if self._holding:
            self._holding = False
            self._lock.release()
        if self._room is not None:
            self._room.set()

    def _violations(self, found: Any) -> list[Violation]:
        rules = self.library.rules
        try:
            if isinstance(found, _Compiled):
                return _labelled(violations_of(rules, found.results), found.label)
            return [
                Violation(rules[rid], msg, tuple(path), details, template, error, unevaluated)
                for rid, msg, path, details, template, error, unevaluated in found
            ]
        except KeyError as exc:  # the child loaded another library (files changed between the loads)
            raise EngineProcessError(f"the engine process reported an unknown rule {exc}") from None

    def evaluate(
        self, kind: str, input: Mapping[str, Any], *, library: bool = True, constraints: bool = True
    ) -> list[Violation]:
        if not (library and constraints):
            raise NotImplementedError("ProcessEngine evaluates whole objects (evaluate_inputs)")
        return self.evaluate_inputs([(kind, dict(input))])

    def clone(self) -> ProcessEngine:
        """Another engine process with the same library and config (for another thread)."""
        return ProcessEngine(self.library, self.config, self.policy_dirs, self.timeout)

    def set_inventory(self, objects: Iterable[Mapping[str, Any]], *, decisive: bool = False) -> None:
        """`data.inventory` for Gatekeeper templates, VAP params and RBAC objects, kept here to give a
        replaced child too. The parent's Evaluator decided `decisive` from its config (the child's
        is the same)."""
        with self._lock:
            self._inventory = (list(objects), decisive)
            message = b"I" + pickle.dumps(self._inventory, protocol=pickle.HIGHEST_PROTOCOL)
            self._call(message, max(self.timeout, 10.0))
