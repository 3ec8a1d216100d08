"""The one content-addressed store under the cache folder (DESIGN section 5).

Everything a run may reuse lives here: stage outputs (text), model responses (JSON) and
embedding vectors (float32). A value is stored under its key -- a SHA-256 over everything that
changes it (`pytest_doceval.store.cache_key`, `ChatRequest.cache_key`) -- through a `Codec`,
as one entry ``<dir>/<key[:2]>/<key>.<codec>.json``::

    {"schema", "codec", "key", "run", "created", "meta", "sha256", "value"}

One checksum rule: ``sha256`` is the SHA-256 of the encoded ``value`` (UTF-8). An entry that is
unreadable, of another schema, codec or key, whose checksum does not match (corrupt, truncated,
hand-edited) or whose value does not decode is a miss: it is recomputed, never trusted. One
write rule: entries are written through `pytest_doceval.atomic`, so a reader sees a whole
entry or none; the caller stores only what succeeded (a failed stage never gets here).

One mode for all, ``--doceval-cache``: ``off`` (no disk at all), ``read`` (use entries, write
none), ``write`` (recompute and store everything; entries written by this same run -- another
xdist worker's -- still count) and ``rw`` (both).

Claims make each model request be sent once across processes: a process about to send one
creates ``<key>.claim`` with ``O_CREAT | O_EXCL`` (pid, host, a random token) and touches it
while in flight; another process finding the claim waits for the entry instead. A claim whose
owner is gone -- a dead pid on this host, or no heartbeat for `stale_after` seconds -- is broken
and the key claimed anew. Breaking and releasing happen under one ``flock`` so that a claim is
only ever removed by the token that was checked.
"""

from __future__ import annotations

import base64
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
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, get_args

from pytest_doceval.atomic import write_text_atomic
from pytest_doceval.store.table import Entry, EntryTable

try:  # POSIX; elsewhere claims are still exclusive, only breaking a stale one is unguarded
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

STORE_SCHEMA = "doceval-store/1"
CacheMode = Literal["off", "read", "write", "rw"]
CACHE_MODES: tuple[str, ...] = get_args(CacheMode)
HOST = socket.gethostname()
T = TypeVar("T")


def checksum(encoded: str) -> str:
    """The one checksum rule: SHA-256 of the encoded value's UTF-8."""
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


class Codec(Generic[T]):
    """How one kind of value becomes the text of an entry and back; `decode` raises
    ValueError (or TypeError) on text it did not write. A codec `in_table` keeps its entries
    as rows of the store's table (`store.table`), not a file each: for small values written
    by the thousand."""

    name: str
    in_table = False

    def encode(self, value: T) -> str:
        raise NotImplementedError

    def decode(self, text: str) -> T:
        raise NotImplementedError


class TextCodec(Codec[str]):
    name = "text"

    def encode(self, value: str) -> str:
        return value

    def decode(self, text: str) -> str:
        return text


class JsonCodec(Codec[Any]):
    """Canonical JSON (sorted keys, no spaces): one spelling per value."""

    name = "json"

    def encode(self, value: Any) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def decode(self, text: str) -> Any:
        return json.loads(text)


class Float32Codec(Codec["Vector"]):
    """A non-empty vector as base64 of its little-endian float32 bytes (exact, compact)."""

    name = "float32"

    def encode(self, value: Vector) -> str:
        import numpy as np

        raw = np.ascontiguousarray(value, dtype="<f4").reshape(-1).tobytes()
        if not raw:
            raise ValueError("an empty vector is not stored")
        return base64.b64encode(raw).decode("ascii")

    def decode(self, text: str) -> Vector:
        import numpy as np

        raw = base64.b64decode(text, validate=True)
        if not raw or len(raw) % 4:
            raise ValueError(f"{len(raw)} bytes are not a float32 vector")
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)


TEXT = TextCodec()
JSON = JsonCodec()
FLOAT32 = Float32Codec()


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
    """This process's claim on a key; `touch` it while working, `Store.release` it."""

    key: str
    path: Path
    token: str

    def touch(self) -> None:
        with contextlib.suppress(OSError):
            os.utime(self.path)


class Store:
    """Entries under `directory` in `mode`; ``directory=None`` means mode ``off``.

    `run_id` names the run (the same in every xdist worker, e.g. xdist's ``testrunuid``): in
    mode ``write`` only entries of this run are read back.
    """

    def __init__(
        self,
        directory: Path | None,
        mode: str = "rw",
        *,
        run_id: str | None = None,
        heartbeat: float = 2.0,
        stale_after: float = 30.0,
    ) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode must be one of {', '.join(CACHE_MODES)}, not {mode!r}")
        self.mode: CacheMode = "off" if directory is None else mode  # type: ignore[assignment]
        self.directory = None if self.mode == "off" else directory
        self.run_id = run_id or uuid.uuid4().hex
        self.heartbeat = heartbeat
        self.stale_after = stale_after
        self._table = (
            None if self.directory is None else EntryTable(self.directory, writes=self.writes)
        )

    @property
    def reads(self) -> bool:
        return self.mode in ("read", "rw")

    @property
    def writes(self) -> bool:
        """Whether values are stored, and so can be shared: claims are used only then."""
        return self.mode in ("write", "rw")

    def _path(self, key: str, suffix: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}{suffix}"

    def entry_path(self, key: str, codec: Codec[Any]) -> Path:
        return self._path(key, f".{codec.name}.json")

    def claim_path(self, key: str) -> Path:
        return self._path(key, ".claim")

    # -- entries ---------------------------------------------------------------------------

    def get(self, key: str, codec: Codec[T]) -> T | None:
        """The value stored under `key`, or None if absent, not readable in this mode, corrupt
        or not matching its checksum."""
        found = self._checked(key, codec)
        return None if found is None else found[0]

    def get_with_meta(self, key: str, codec: Codec[T]) -> tuple[T, dict[str, Any]] | None:
        """`get`, with the entry's ``meta`` (what its writer kept beside the value)."""
        found = self._checked(key, codec)
        if found is None:
            return None
        value, meta = found
        if isinstance(meta, str):  # a row's meta, kept as JSON text
            try:
                meta = json.loads(meta)
            except ValueError:
                meta = None
        return value, dict(meta) if isinstance(meta, dict) else {}

    def _checked(self, key: str, codec: Codec[T]) -> tuple[T, Any] | None:
        """The decoded value under `key` and its meta as stored, if the entry passes the
        store's checks."""
        entry = self._entry(key, codec)
        if entry is None:
            return None
        encoded = entry.get("value")
        if entry.get("key") != key or entry.get("codec") != codec.name:
            return None
        # A hand-edited (or half-synced) entry that is still valid JSON is not trusted: its
        # checksum no longer matches, and the value is recomputed.
        if not isinstance(encoded, str) or entry.get("sha256") != checksum(encoded):
            return None
        if not self.reads and entry.get("run") != self.run_id:
            return None  # mode write: an older entry is what is being refreshed
        try:
            return codec.decode(encoded), entry.get("meta")
        except (ValueError, TypeError):
            return None

    def has(self, key: str, codec: Codec[Any]) -> bool:
        """Whether an entry is stored under `key` that this mode may read, as far as a look
        without checking it says (`get` checks it: a corrupt one is a miss then)."""
        if self.directory is None or not (self.reads or self.writes):
            return False
        if self._table is not None and codec.in_table:
            run = self._table.run_of(key)
            return run is not None and (self.reads or run == self.run_id)
        return self.reads and self.entry_path(key, codec).is_file()

    def _entry(self, key: str, codec: Codec[Any]) -> dict[str, Any] | None:
        if self.directory is None:
            return None
        if self._table is not None and codec.in_table:
            row = self._table.get(key)
            if row is None:
                return None
            return {
                "codec": row.codec,
                "key": row.key,
                "run": row.run,
                "meta": row.meta,
                "sha256": row.sha256,
                "value": row.value,
            }
        try:
            entry = json.loads(self.entry_path(key, codec).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("schema") != STORE_SCHEMA:
            return None
        return entry

    def put(
        self, key: str, value: T, codec: Codec[T], meta: Mapping[str, Any] | None = None
    ) -> None:
        """Store `value` with `meta` (a fingerprint, a request, what computing it cost), which
        `get_with_meta` gives back; its checksum covers the value only."""
        if self.directory is None or not self.writes:
            return
        encoded = codec.encode(value)
        if self._table is not None and codec.in_table:
            self._table.put(
                Entry(
                    key=key,
                    codec=codec.name,
                    run=self.run_id,
                    created=time.time(),
                    meta=json.dumps(dict(meta or {}), ensure_ascii=False, default=str),
                    sha256=checksum(encoded),
                    value=encoded,
                )
            )
            return
        entry = {
            "schema": STORE_SCHEMA,
            "codec": codec.name,
            "key": key,
            "run": self.run_id,
            "created": time.time(),
            "meta": dict(meta or {}),
            "sha256": checksum(encoded),
            "value": encoded,
        }
        text = json.dumps(entry, ensure_ascii=False, default=str)
        write_text_atomic(self.entry_path(key, codec), text)

    def close(self) -> None:
        """Write what is still kept in memory (the table's last batch); the store stays
        usable (it reopens its table when asked again)."""
        if self._table is not None:
            self._table.close()

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
