"""Model responses on disk, and claims so that each request is sent once across processes.

An entry is ``<dir>/<key[:2]>/<key>.json``: the response payload, the SHA-256 of its canonical
JSON (checked on read: a corrupt or truncated entry is recomputed, never trusted), the request's
key payload for humans (image digests, never image bytes; never the API key) and the run that
wrote it. Entries are written atomically.

A process about to send a request first creates ``<key>.claim`` with ``O_CREAT | O_EXCL``
(owner's pid, host and a random token) and touches it while the request is in flight; another
process finding the claim waits for the entry instead of sending the request again. A claim
whose owner is gone -- a dead pid on this host, or no heartbeat for `stale_after` seconds -- is
broken and the request claimed anew. Breaking and releasing happen under one ``flock`` so that a
claim is only ever removed by the token that was checked.

Modes: ``off`` (no disk at all), ``read`` (use entries, write none), ``write`` (send everything
again and store it; entries written by this same run, e.g. by another xdist worker, still
count), ``rw`` (both).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pytest_doceval.atomic import write_text_atomic
from pytest_doceval.models.requests import ChatResponse, Source, canonical_json

try:  # POSIX; elsewhere claims are still exclusive, only breaking a stale one is unguarded
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

ENTRY_SCHEMA = "doceval-response/1"
CacheMode = Literal["off", "read", "write", "rw"]
CACHE_MODES: tuple[str, ...] = get_args(CacheMode)
HOST = socket.gethostname()


def payload_digest(payload: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


@dataclass(frozen=True)
class ClaimInfo:
    """What a claim file says about its owner, and how long ago it was last touched."""

    token: str | None
    pid: int | None
    host: str | None
    age: float

    def stale(self, stale_after: float) -> bool:
        if self.host == HOST and self.pid is not None and not _pid_alive(self.pid):
            return True
        return self.age > stale_after


@dataclass(frozen=True)
class Claim:
    """This process's claim on a key; `touch` it while working, `ResponseCache.release` it."""

    key: str
    path: Path
    token: str

    def touch(self) -> None:
        with contextlib.suppress(OSError):
            os.utime(self.path)


class ResponseCache:
    """Responses under `directory` in `mode`; `directory=None` means mode ``off``.

    `run_id` names the run (the same in every xdist worker, e.g. xdist's ``testrunuid``): in
    mode ``write`` only entries of this run are read back.
    """

    def __init__(
        self,
        directory: Path | None,
        mode: CacheMode = "rw",
        *,
        run_id: str | None = None,
        heartbeat: float = 2.0,
        stale_after: float = 30.0,
    ) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode must be one of {', '.join(CACHE_MODES)}, not {mode!r}")
        self.directory = directory
        self.mode: CacheMode = "off" if directory is None else mode
        self.run_id = run_id or uuid.uuid4().hex
        self.heartbeat = heartbeat
        self.stale_after = stale_after

    @property
    def reads(self) -> bool:
        return self.mode in ("read", "rw")

    @property
    def writes(self) -> bool:
        """Whether results are stored, and so can be shared: claims are used only then."""
        return self.mode in ("write", "rw")

    def _path(self, key: str, suffix: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}{suffix}"

    def entry_path(self, key: str) -> Path:
        return self._path(key, ".json")

    def claim_path(self, key: str) -> Path:
        return self._path(key, ".claim")

    # -- entries ---------------------------------------------------------------------------

    def get(self, key: str, *, source: Source = "cache") -> ChatResponse | None:
        """The stored response for `key`, or None if absent, not readable in this mode, corrupt
        or not matching its checksum."""
        if self.mode == "off":
            return None
        try:
            entry = json.loads(self.entry_path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("schema") != ENTRY_SCHEMA:
            return None
        payload = entry.get("payload")
        if entry.get("key") != key or not isinstance(payload, dict):
            return None
        if entry.get("sha256") != payload_digest(payload):
            return None
        if not self.reads and entry.get("run") != self.run_id:
            return None  # mode write: an older entry is what is being refreshed
        try:
            return ChatResponse.from_payload(payload, source=source)
        except ValueError:
            return None

    def put(self, key: str, response: ChatResponse, request: Mapping[str, Any]) -> None:
        """Store `response` (`request` is the key payload, kept for whoever reads the file)."""
        if not self.writes:
            return
        payload = response.to_payload()
        entry = {
            "schema": ENTRY_SCHEMA,
            "key": key,
            "run": self.run_id,
            "created": time.time(),
            "request": request,
            "payload": payload,
            "sha256": payload_digest(payload),
        }
        write_text_atomic(self.entry_path(key), json.dumps(entry, ensure_ascii=False))

    # -- claims ----------------------------------------------------------------------------

    def try_claim(self, key: str) -> Claim | None:
        """Claim `key` for this process, or None if someone holds it."""
        path = self.claim_path(key)
        token = uuid.uuid4().hex
        flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
        try:
            try:
                fd = os.open(path, flags, 0o644)
            except FileNotFoundError:  # the key's folder does not exist yet
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, flags, 0o644)
        except FileExistsError:
            return None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"pid": os.getpid(), "host": HOST, "token": token, "at": time.time()}, handle)
        return Claim(key, path, token)

    def claim_info(self, key: str) -> ClaimInfo | None:
        """The current claim on `key`, or None if there is none."""
        path = self.claim_path(key)
        try:
            age = time.time() - path.stat().st_mtime
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError:
            return ClaimInfo(None, None, None, 0.0)
        try:
            data = json.loads(text)
        except ValueError:  # being written just now, or written by a process that died then
            data = {}
        if not isinstance(data, dict):
            data = {}
        pid = data.get("pid")
        return ClaimInfo(
            token=data.get("token") if isinstance(data.get("token"), str) else None,
            pid=pid if isinstance(pid, int) else None,
            host=data.get("host") if isinstance(data.get("host"), str) else None,
            age=max(0.0, age),
        )

    def break_stale(self, key: str, seen: ClaimInfo) -> bool:
        """Remove the claim on `key` if it is still the stale one `seen`; True if removed.
        The caller then claims the key like anyone else (only one ``O_EXCL`` wins)."""
        with self._claims_lock():
            now = self.claim_info(key)
            if now is None or now.token != seen.token or not now.stale(self.stale_after):
                return False
            with contextlib.suppress(FileNotFoundError):
                self.claim_path(key).unlink()
            return True

    def release(self, claim: Claim) -> None:
        """Drop `claim`, unless it was broken and someone else's claim now stands there."""
        with self._claims_lock():
            now = self.claim_info(claim.key)
            if now is not None and now.token == claim.token:
                with contextlib.suppress(FileNotFoundError):
                    claim.path.unlink()

    @contextlib.contextmanager
    def _claims_lock(self) -> Iterator[None]:
        """One lock for all claim removals: they are rare and brief. The OS drops it if the
        holder dies, so it can never go stale itself."""
        if fcntl is None or self.directory is None:
            yield
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        with (self.directory / ".claims.lock").open("a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
