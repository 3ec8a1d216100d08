"""A small deterministic OpenAI-compatible server for tests and benchmarks (standard library only).

``POST /v1/chat/completions`` answers with `reply_text(messages)`: one line per message, its role
and text, and for each image part ``image <byte length> <sha256>`` of the decoded bytes -- so a
test can tell that an image arrived exactly as it was given. ``POST /v1/embeddings`` returns
unit vectors derived from each input's SHA-256, after the same latency. ``GET /_stats`` reports
the request counts.

Faults are chosen per request by markers anywhere in the messages' text (an embeddings
request's inputs), so one server serves many tests at once:

    [latency:0.2]                   answer 0.2 s later (on top of the server's own latency)
    [fault:500 times=2]             HTTP 500 for the first 2 requests with this body (any status)
    [fault:429 retry_after=0.3]     HTTP 429 with ``Retry-After: 0.3``
    [fault:429 retry_after=1 date]  the same as an HTTP-date
    [fault:sleep seconds=5]         wait 5 s before answering (a client timeout)
    [fault:malformed]               200 with a body that is not JSON
    [fault:empty]                   200 with ``"choices": []``
    [fault:endless]                 200 whose body trickles forever
    [fault:close]                   close the connection without answering
    [fault:echo-auth]               HTTP 500 whose message repeats the Authorization header
    [fault:echo-auth-ok]            200 whose answer repeats the Authorization header

``times=N`` limits any fault to the first N requests with the same body (counted by the
canonical JSON of the body). Run ``python tests/model_server.py --latency 0.1`` to serve from a
separate process; it prints its base URL.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GATHER_WAIT = 60.0  # seconds an answer waits for `ModelServer.gather` requests at most
MARKER = re.compile(r"\[(fault|latency):([^\]]*)\]")


def body_digest(body: Mapping[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [p for p in content or [] if isinstance(p, dict)]


def _image_bytes(part: Mapping[str, Any]) -> bytes:
    url = str(part.get("image_url", {}).get("url", ""))
    _, _, data = url.partition(";base64,")
    return base64.b64decode(data)


def reply_text(messages: list[dict[str, Any]]) -> str:
    """The answer to `messages`: a pure function of them."""
    lines = []
    for msg in messages:
        for part in _parts(msg.get("content")):
            if part.get("type") == "image_url":
                png = _image_bytes(part)
                lines.append(
                    f"{msg.get('role')}: image {len(png)} {hashlib.sha256(png).hexdigest()}"
                )
            else:
                lines.append(f"{msg.get('role')}: {part.get('text', '')}")
    return "\n".join(lines)


def embedding(text: str, dimensions: int = 8) -> list[float]:
    raw = hashlib.sha256(text.encode("utf-8")).digest()
    values = [(raw[i % len(raw)] - 127.5) / 127.5 for i in range(dimensions)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: bytes


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 drops bursts of connections

    def __init__(self, owner: ModelServer) -> None:
        self.owner = owner
        super().__init__((owner.host, owner.port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up (a timeout under test) is not a server failure.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the second waits for the client's
    # delayed ACK (~40 ms), which would be measured as model latency.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send_json(self, status: int, data: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(data).encode("utf-8"), headers)

    def _send_raw(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/_stats":
            self._send_json(200, self.server.owner.stats())
        else:
            self._send_json(404, {"error": {"message": f"no such path {self.path}"}})

    def do_POST(self) -> None:
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            body = json.loads(raw)
        except ValueError:
            self._send_json(400, {"error": {"message": "the request body is not JSON"}})
            return
        owner.record(Recorded(self.path, dict(self.headers.items()), raw))
        seen = owner.count_body(body)
        with owner.in_flight():
            if self.path == "/v1/embeddings":
                self._embeddings(body, seen)
            elif self.path == "/v1/chat/completions":
                self._chat(body, seen)
            else:
                self._send_json(404, {"error": {"message": f"no such path {self.path}"}})

    def _embeddings(self, body: dict[str, Any], seen: int) -> None:
        inputs = body.get("input", [])
        inputs = [inputs] if isinstance(inputs, str) else list(inputs)
        if self._act(" ".join(str(t) for t in inputs), seen):
            return
        dims = int(body.get("dimensions", 8))
        data = [
            {"object": "embedding", "index": i, "embedding": embedding(str(t), dims)}
            for i, t in enumerate(inputs)
        ]
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model")})

    def _faults(self, text: str, seen: int) -> list[tuple[str, dict[str, str]]]:
        """Wait the latency `text` (and the server) asks for; the faults its markers name."""
        self.server.owner.gathered.wait(GATHER_WAIT)
        delay = self.server.owner.latency
        faults: list[tuple[str, dict[str, str]]] = []
        for what, arg in MARKER.findall(text):
            if what == "latency":
                delay += float(arg)
                continue
            kind, *options = arg.split()
            opts = dict(o.split("=", 1) if "=" in o else (o, "") for o in options)
            if seen <= int(opts.get("times", "1000000000")):
                faults.append((kind, opts))
        if delay:
            self.server.owner.stopping.wait(delay)
        return faults

    def _act(self, text: str, seen: int) -> bool:
        """Wait the latency `text` asks for and act out its faults; True if one answered."""
        return any(self._fault(kind, opts, seen) for kind, opts in self._faults(text, seen))

    def _chat(self, body: dict[str, Any], seen: int) -> None:
        messages = body.get("messages", [])
        text = " ".join(str(p.get("text", "")) for m in messages for p in _parts(m.get("content")))
        faults = self._faults(text, seen)
        if any(self._fault(kind, opts, seen) for kind, opts in faults):
            return
        reply = reply_text(messages)
        auth = self.headers.get("Authorization", "")
        if any(kind == "echo-auth-ok" for kind, _ in faults):
            reply += f"\nauthorization: {auth}"
        chars = len(text)
        self._send_json(
            200,
            {
                "id": f"chatcmpl-{body_digest(body)[:12]}",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": chars // 4 + 1,
                    "completion_tokens": len(reply) // 4 + 1,
                    "total_tokens": chars // 4 + len(reply) // 4 + 2,
                },
            },
        )

    def _fault(self, kind: str, opts: Mapping[str, str], seen: int) -> bool:
        """Act out fault `kind`; True if it answered (or hung up) instead of the model."""
        owner = self.server.owner
        if kind.isdigit():
            headers = {}
            if "retry_after" in opts:
                seconds = float(opts["retry_after"])
                headers["Retry-After"] = (
                    formatdate(time.time() + seconds, usegmt=True)
                    if "date" in opts
                    else f"{seconds:g}"
                )
            message = f"injected {kind} on request {seen} with this body"
            self._send_json(int(kind), {"error": {"message": message}}, headers)
            return True
        if kind == "echo-auth":
            auth = self.headers.get("Authorization", "")
            self._send_json(500, {"error": {"message": f"bad credentials: {auth}"}})
            return True
        if kind == "sleep":
            owner.stopping.wait(float(opts.get("seconds", "3600")))
            return False
        if kind == "malformed":
            self._send_raw(200, b'{"choices": [{"message": {"content": "trunc')
            return True
        if kind == "empty":
            self._send_json(200, {"object": "chat.completion", "choices": []})
            return True
        if kind == "close":
            self.close_connection = True
            return True
        if kind == "endless":
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(10**9))
            self.end_headers()
            self.wfile.write(b'{"choices": [')
            try:
                while not owner.stopping.wait(0.02):
                    self.wfile.write(b" ")
                    self.wfile.flush()
            except OSError:  # the client gave up: exactly what is being tested
                pass
            return True
        return False


class ModelServer:
    """The server on 127.0.0.1 (an ephemeral port unless `port`), in a daemon thread."""

    def __init__(
        self, *, latency: float = 0.0, host: str = "127.0.0.1", port: int = 0, gather: int = 1
    ) -> None:
        self.latency = latency
        # Answers wait until `gather` requests were in flight at once (or GATHER_WAIT passed):
        # a test of concurrency waits for a condition, not for a machine fast enough that
        # requests overlap by chance.
        self.gather = gather
        self.gathered = threading.Event()
        if gather <= 1:
            self.gathered.set()
        self.host = host
        self.port = port
        self.stopping = threading.Event()
        self.counts: Counter[str] = Counter()
        self.requests: list[Recorded] = []
        self.active = 0
        self.peak_active = 0
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def hold_until(self, requests: int) -> None:
        """Hold answers until `requests` are in flight at once (at most GATHER_WAIT)."""
        with self._lock:
            self.gather = requests
            if self.peak_active < requests:
                self.gathered.clear()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.counts.values())

    def count(self, body: Mapping[str, Any]) -> int:
        """How many times `body` (e.g. ``ChatRequest.body()``) was received."""
        with self._lock:
            return self.counts[body_digest(body)]

    def record(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)

    def count_body(self, body: Mapping[str, Any]) -> int:
        with self._lock:
            digest = body_digest(body)
            self.counts[digest] += 1
            return self.counts[digest]

    def in_flight(self) -> _InFlight:
        return _InFlight(self)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "total": sum(self.counts.values()),
                "distinct": len(self.counts),
                "max_per_body": max(self.counts.values(), default=0),
                "peak_active": self.peak_active,
            }

    def start(self) -> ModelServer:
        self._httpd = _Server(self)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # ends sleeps and endless bodies
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _InFlight:
    def __init__(self, server: ModelServer) -> None:
        self.server = server

    def __enter__(self) -> None:
        with self.server._lock:
            self.server.active += 1
            self.server.peak_active = max(self.server.peak_active, self.server.active)
            if self.server.peak_active >= self.server.gather:
                self.server.gathered.set()

    def __exit__(self, *exc: object) -> None:
        with self.server._lock:
            self.server.active -= 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ModelServer(latency=args.latency, port=args.port).start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
