"""The hub: every model request of a run, each sent once, many at a time.

The hub owns one event loop in a background thread. `Hub.start_prefetch` hands it the requests
of the selected tests right after collection; they go out concurrently (each model's
``max_concurrency`` at a time) while the tests run, and a test asking for its response with
`Hub.complete_sync` gets the finished result, joins the request in flight, or -- if it was never
prefetched -- has it sent then. A key is fetched at most once per process (failures included: a
request that failed after its retries is not sent again by the next test that needs it).

Across processes (xdist workers sharing the cache folder) the cache's claims decide who sends:
a worker takes a concurrency slot, then claims the key; a worker finding the key claimed gives
the slot back and waits for the owner's entry, breaking the claim if the owner died. Claims need
a cache that stores results (mode ``write`` or ``rw``); in modes ``off`` and ``read`` each
process sends what it needs, so under xdist prefetch only where the cache writes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from pytest_doceval.models.client import ModelClient, ModelError
from pytest_doceval.models.requests import ChatRequest, ChatResponse, Source
from pytest_doceval.store import JSON, Claim, Store

if TYPE_CHECKING:
    from pytest_doceval.models.embedding_requests import EmbeddingsRequest, EmbeddingsResponse

    # An embeddings request is fetched, claimed and counted like a chat request; only where
    # its answer is stored differs (one float32 entry per text, see `embedding_requests`).
    Request = ChatRequest | EmbeddingsRequest
    Response = ChatResponse | EmbeddingsResponse

log = logging.getLogger("pytest_doceval.models")
MAX_LISTED_ERRORS = 20


@dataclass
class PrefetchSummary:
    """What a prefetch did: distinct requests by where their answer came from."""

    requested: int = 0
    distinct: int = 0
    sent: int = 0
    cached: int = 0
    from_peers: int = 0
    failed: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"{self.distinct} model request(s) ({self.requested} asked) in {self.seconds:.2f} s: "
            f"{self.sent} sent, {self.cached} from the cache, {self.from_peers} from other "
            f"workers, {self.failed} failed"
        )

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Hub:
    """Fetches `ChatRequest`s (and `EmbeddingsRequest`s: their vectors stored one entry per
    text) through `client`, storing them in `cache`.

    `poll_max` bounds the interval at which a process waiting for a peer's result looks for it;
    `result_timeout` is the safety net on any one synchronous wait (the real bounds are the
    per-attempt deadlines, the finite retries and the bounded wait for peers).
    """

    def __init__(
        self,
        client: ModelClient,
        cache: Store,
        *,
        poll_max: float = 0.2,
        result_timeout: float = 3600.0,
    ) -> None:
        self.client = client
        self.cache = cache
        self.poll_max = poll_max
        self.result_timeout = result_timeout
        self._tasks: dict[str, asyncio.Task[Response]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # Distinct requests of this process by where their answer came from (model, cache,
        # peer) or "failed": every request, whichever path asked for it.
        self.counts: Counter[str] = Counter()

    # -- the loop thread -------------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=self._run_loop, args=(loop,), name="doceval-models", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    @staticmethod
    def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.run_forever()

    def _submit(self, coro: Any) -> concurrent.futures.Future[Any]:
        if threading.current_thread() is self._thread:
            raise RuntimeError("the hub's synchronous API cannot be used from its own loop")
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())

    def close(self) -> None:
        """Cancel what is still in flight (releasing its claims), close the connections and
        stop the loop thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=30)
        except (concurrent.futures.TimeoutError, RuntimeError) as exc:
            log.warning("model hub did not shut down cleanly: %s", type(exc).__name__)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        if not thread.is_alive():
            loop.close()
        # Tasks belong to the loop that ran them; a later call starts afresh (from the cache).
        self._tasks = {}

    async def _shutdown(self) -> None:
        pending = [task for task in self._tasks.values() if not task.done()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        # Let a prefetch that was waiting on them finish its summary, then end the rest.
        others = asyncio.all_tasks() - {asyncio.current_task()}
        if others:
            _, still = await asyncio.wait(others, timeout=5)
            for task in still:
                task.cancel()
            await asyncio.gather(*still, return_exceptions=True)
        await self.client.aclose()

    def __enter__(self) -> Hub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the synchronous API ---------------------------------------------------------------

    def run(self, coro: Any) -> concurrent.futures.Future[Any]:
        """Run `coro` on the hub's loop (where `get` may be awaited); returns at once, so it
        may be called from the loop itself (a model stage finishing starts the next one)."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())

    @overload
    async def get(self, request: ChatRequest) -> ChatResponse: ...

    @overload
    async def get(self, request: EmbeddingsRequest) -> EmbeddingsResponse: ...

    async def get(self, request: Request) -> Response:
        """On the hub's loop: the response to `request`, each key fetched once."""
        return await self._get(request)

    def complete_sync(self, request: ChatRequest, *, timeout: float | None = None) -> ChatResponse:
        """The response to `request`: from this run, the cache, a peer, or sent now.
        Raises the request's `ModelError` if it failed."""
        future: concurrent.futures.Future[ChatResponse] = self._submit(self.get(request))
        wait = self.result_timeout if timeout is None else timeout
        try:
            return future.result(timeout=wait)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ModelError(
                f"{request.label()}: no response within {wait:g} s",
                model=request.model,
                case=request.case,
            ) from None

    def start_prefetch(
        self, requests: Iterable[ChatRequest]
    ) -> concurrent.futures.Future[PrefetchSummary]:
        """Start fetching `requests` (in order, concurrently); returns at once."""
        return self._submit(self._prefetch(list(requests)))

    def prefetch(self, requests: Iterable[ChatRequest]) -> PrefetchSummary:
        """Fetch `requests` concurrently and wait until all are done or failed."""
        return self.start_prefetch(requests).result(timeout=self.result_timeout)

    # -- on the loop -----------------------------------------------------------------------

    async def _prefetch(self, requests: list[ChatRequest]) -> PrefetchSummary:
        start = time.perf_counter()
        distinct: dict[str, ChatRequest] = {}
        for request in requests:
            distinct.setdefault(request.cache_key(), request)
        results = await asyncio.gather(
            *(self._get(r) for r in distinct.values()), return_exceptions=True
        )
        summary = PrefetchSummary(requested=len(requests), distinct=len(distinct))
        for result in results:
            if not isinstance(result, BaseException):
                if result.source == "model":
                    summary.sent += 1
                elif result.source == "cache":
                    summary.cached += 1
                else:
                    summary.from_peers += 1
            else:
                summary.failed += 1
                if len(summary.errors) < MAX_LISTED_ERRORS:
                    summary.errors.append(self.client.redact(str(result) or repr(result)))
        summary.seconds = time.perf_counter() - start
        log.info("prefetched %s", summary.describe())
        return summary

    async def _get(self, request: Request) -> Response:
        key = request.cache_key()
        task = self._tasks.get(key)
        if task is None:
            task = self._tasks[key] = asyncio.get_running_loop().create_task(
                self._fetch(request, key)
            )
            task.add_done_callback(self._count)
        # Shielded: a caller giving up must not cancel the request for everyone else.
        return await asyncio.shield(task)

    def _count(self, task: asyncio.Task[Response]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        self.counts["failed" if error is not None else task.result().source] += 1

    async def _fetch(self, request: Request, key: str) -> Response:
        hit = self._stored(request, key, "cache")
        if hit is not None:
            return hit
        if not self.cache.writes:
            async with self.client.slot(request.model):
                return await self.client.send(request)
        loop = asyncio.get_running_loop()
        patience = self.client.worst_case_seconds(request.model) + self.cache.stale_after
        deadline = loop.time() + patience
        while True:
            # Slot first, claim second: a process claims only what it is about to send, so
            # processes sharing a run split the requests between them instead of one claiming
            # all and the others idling.
            async with self.client.slot(request.model):
                hit = self._stored(request, key, "peer")
                if hit is not None:
                    return hit
                claim = self.cache.try_claim(key)
                if claim is not None:
                    # A peer may have stored the answer and released its claim between the
                    # look above and this claim: look again, or the request goes out twice.
                    hit = self._stored(request, key, "peer")
                    if hit is not None:
                        self.cache.release(claim)
                        return hit
                    return await self._send_claimed(request, key, claim)
            hit = await self._wait_for_peer(request, key, deadline, patience)
            if hit is not None:
                return hit

    def _stored(self, request: Request, key: str, source: Source) -> Response | None:
        """The stored response for `key` (None when absent, untrusted or not a response)."""
        if not isinstance(request, ChatRequest):
            return request.stored(self.cache, source)
        payload = self.cache.get(key, JSON)
        if not isinstance(payload, dict):
            return None
        try:
            return ChatResponse.from_payload(payload, source=source)
        except ValueError:
            return None

    async def _send_claimed(self, request: Request, key: str, claim: Claim) -> Response:
        beat = asyncio.get_running_loop().create_task(self._heartbeat(claim))
        try:
            response = await self.client.send(request)
            try:
                self._keep(request, key, response)
            except OSError as exc:  # the answer is good; only sharing it failed
                log.warning("%s: cannot store the response (%s)", request.label(), exc)
            return response
        finally:
            beat.cancel()
            self.cache.release(claim)

    def _keep(self, request: Request, key: str, response: Response) -> None:
        if isinstance(request, ChatRequest):
            assert isinstance(response, ChatResponse)
            self.cache.put(key, response.to_payload(), JSON, {"request": request.key_payload()})
        else:
            assert not isinstance(response, ChatResponse)
            request.keep(self.cache, response)

    async def _heartbeat(self, claim: Claim) -> None:
        while True:
            await asyncio.sleep(self.cache.heartbeat)
            claim.touch()

    async def _wait_for_peer(
        self, request: Request, key: str, deadline: float, patience: float
    ) -> Response | None:
        """The peer's response once stored, or None when the claim is gone (released without
        a result, or broken because its owner died): the caller then claims it again."""
        loop = asyncio.get_running_loop()
        interval = 0.01
        while True:
            hit = self._stored(request, key, "peer")
            if hit is not None:
                return hit
            info = self.cache.claim_info(key)
            if info is None:
                return None
            if info.stale(self.cache.stale_after):
                if self.cache.break_stale(key, info):
                    log.warning(
                        "%s: took over the request from pid %s on %s (no heartbeat for %.1f s)",
                        request.label(),
                        info.pid,
                        info.host,
                        info.age,
                    )
                return None
            if loop.time() > deadline:
                raise ModelError(
                    f"{request.label()}: waited {patience:g} s for pid {info.pid} on {info.host}, "
                    "which is sending the same request, without a result",
                    model=request.model,
                    case=request.case,
                )
            await asyncio.sleep(interval)
            interval = min(interval * 1.5, self.poll_max)
