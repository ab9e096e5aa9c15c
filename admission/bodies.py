"""Reading request bodies with bounded memory and time, so slow clients cannot starve fast ones.

Bodies are read concurrently (a client that drips its body must not hold up the others), each
within ``max_request_bytes`` and ``body_timeout_seconds``. What all the bodies being read hold
together is bounded by a byte budget per worker (``admission.max_buffered_bytes``): when a chunk
would go over it, the reader that has been reading longest is evicted (its connection gets 503 and
is closed). A body from the API server arrives in milliseconds, so the longest reader is a stalled
or dripping client, and a prompt request still gets through while the budget holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
from collections.abc import AsyncIterator

from starlette.requests import ClientDisconnect, Request


class BadRequest(Exception):
    """A request body that is not an AdmissionReview we can read: HTTP 400, never a 500."""


class SlowBody(Exception):
    """The body did not arrive within the body timeout: HTTP 408, and the connection is closed."""


class Evicted(Exception):
    """The body was dropped to keep the byte budget for other requests: HTTP 503, closed."""


class _Reader:
    __slots__ = ("evicted", "seq", "size", "task")

    def __init__(self, seq: int, task: asyncio.Task[object] | None) -> None:
        self.seq = seq
        self.size = 0
        self.evicted = False
        self.task = task


def arrived(request: Request) -> bool:
    """Whether the request's whole body has arrived, unread: the server has seen its end and the
    next receive returns it at once. Read from uvicorn's request cycle (the app's ``receive``: its
    ``more_body`` and ``message_event``, which its protocol sets when the message is complete);
    False for any other server, and for a body still coming, which :meth:`BodyReader.read` reads
    with its timeout and budget."""
    cycle = getattr(request.receive, "__self__", None)
    event = getattr(cycle, "message_event", None)
    return getattr(cycle, "more_body", True) is False and isinstance(event, asyncio.Event) and event.is_set()


class BodyReader:
    """Reads bodies within a shared byte budget (one per worker process)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self._readers: dict[int, _Reader] = {}
        self._seq = itertools.count()

    async def read(self, request: Request, limit: int, timeout: float) -> bytes:
        """The body, or BadRequest (over ``limit``), SlowBody (past ``timeout``), Evicted."""
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise BadRequest(f"request body of {declared} bytes exceeds the limit of {limit} bytes")
        if arrived(request):
            # The whole body came with the request head (an API server's review, a few KB, does):
            # taken at once, with nothing to time and nothing in flight to budget.
            message = await request.receive()
            if message["type"] != "http.request":
                raise ClientDisconnect()
            body: bytes = message.get("body", b"")
            if len(body) > limit:
                raise BadRequest(f"request body exceeds the limit of {limit} bytes")
            return body
        task = asyncio.current_task()
        reader = _Reader(next(self._seq), task)
        self._readers[reader.seq] = reader
        try:
            async with asyncio.timeout(timeout):
                return await self._chunks(request, reader, limit)
        except TimeoutError:
            raise SlowBody() from None
        except asyncio.CancelledError:
            if not reader.evicted or task is None:
                raise
            task.uncancel()  # cancelled by _evict, not by the server: answer 503
            raise Evicted() from None
        finally:
            self.used -= reader.size
            del self._readers[reader.seq]

    async def _chunks(self, request: Request, reader: _Reader, limit: int) -> bytes:
        chunks: list[bytes] = []
        async for chunk in request.stream():
            reader.size += len(chunk)
            self.used += len(chunk)
            if reader.size > limit:
                raise BadRequest(f"request body exceeds the limit of {limit} bytes")
            while self.used > self.budget and self._evict(reader):
                pass
            chunks.append(chunk)
        return b"".join(chunks)

    def _evict(self, keep: _Reader) -> bool:
        """Evict the longest reader other than ``keep``; False when there is none left."""
        for seq, reader in self._readers.items():  # insertion order: the oldest first
            if seq != keep.seq and not reader.evicted and reader.task is not None:
                reader.evicted = True
                reader.task.cancel()
                self.used -= reader.size
                reader.size = 0
                return True
        return False


#: a body past this size is "large": a typical AdmissionReview is a few KB, and one of this size
#: costs tens of milliseconds to parse and judge
LARGE_BODY_BYTES = 128 * 1024


class SmallestFirst:
    """A semaphore whose waiters go in by body size, smallest first (ties: arrival order).

    Parsing and evaluating cost in proportion to the body. Served in arrival order, a client that
    keeps sending 3 MiB objects makes every 4 KB request wait behind its queue (measured: seconds,
    bench/hostile.py); smallest first keeps a normal request's wait to the requests already running.
    A waiter older than ``max_wait`` seconds goes first whatever its size, so a large object is
    delayed, never starved. Large bodies (past ``large`` bytes) hold one slot at most: each costs
    tens of milliseconds of the event loop (parsing) and of its evaluation thread (facts), so
    several at once starve every small request of the loop, and under a flood of them every large
    waiter ages and goes first (measured with bench/hostile.py's big-bodies: a normal request's
    p50 was 2 to 5 s with three large ones at a time, 47 ms with one).
    """

    def __init__(self, slots: int, max_wait: float = 1.0, large: int = LARGE_BODY_BYTES) -> None:
        self._free = slots
        self._max_wait = max_wait
        self._large = large
        self._large_held = 0
        self._waiters: list[tuple[int, int, float, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def _allowed(self, size: int) -> bool:
        return size <= self._large or self._large_held == 0

    def _take(self, size: int) -> None:
        self._free -= 1
        if size > self._large:
            self._large_held += 1

    @contextlib.asynccontextmanager
    async def slot(self, size: int) -> AsyncIterator[None]:
        if self._free > 0 and not self._waiters and self._allowed(size):
            self._take(size)
        else:
            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[None] = loop.create_future()
            heapq.heappush(self._waiters, (size, next(self._seq), loop.time(), waiter))
            self._dispatch()  # a free slot that the large waiters ahead may not take
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._release(size)  # it was handed a slot while being cancelled
                raise
        try:
            yield
        finally:
            self._release(size)

    def _release(self, size: int) -> None:
        self._free += 1
        if size > self._large:
            self._large_held -= 1
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand free slots to waiters: the oldest of those waiting past ``max_wait``, else the
        smallest; a large one only within its share."""
        self._waiters = [w for w in self._waiters if not w[3].done()]
        heapq.heapify(self._waiters)
        while self._free > 0 and self._waiters:
            now = asyncio.get_running_loop().time()
            allowed = [w for w in self._waiters if self._allowed(w[0])]
            if not allowed:
                return
            aged = [w for w in allowed if now - w[2] > self._max_wait]
            chosen = min(aged, key=lambda w: w[2]) if aged else min(allowed)
            self._waiters.remove(chosen)
            heapq.heapify(self._waiters)
            self._take(chosen[0])
            chosen[3].set_result(None)
