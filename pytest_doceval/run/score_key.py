"""The key of a test's score stage (`run.score_stage`): a (case, system) is scored once, and a
warm run whose inputs, outputs and scoring code are unchanged finds its score in the store.

The key (`ScoreKeys.key`) is a SHA-256 over everything that determines a result:

* the kind (its class) and its ``scoring_id``; the case reference (case, system, labels);
* the bytes of the suite's ``suite.toml``;
* the suite's input files (`SuiteFiles`): a case with its own folder (``<suite>/<case>/``) is
  keyed by that folder's files and every file of the suite outside any case's folder; a case
  without one by every file of the suite folder. Other systems' saved outputs in the case's
  folder count too: hashing more re-scores more, never serves a stale number;
* the keys of the test's stage outputs (the engine's: the system's fingerprint and its input);
* what the result's "what changed" view and a kind's verdict read of the baseline: the cache
  key of the output it was made from and its metrics;
* the scoring code: every source file of the package except the rooms that only present or
  run things (``report/``, ``html/``, ``cli/``) and the other kinds' folders, plus the kind's
  own folder (a kind of your own: its package, or the one file that defines it);
* the project's ``[tool.doceval]`` table (models, vlm, embedder), the Python version and the
  versions of the package's dependencies.

So editing a truth file, an output, the suite file, a metric or a normaliser re-scores, and so
does a library upgrade. What is not hashed is code of your own a kind of your own imports from
elsewhere: after editing it, run once with ``--doceval-cache=write``. ``--doceval-cache=off``
scores everything; an entry that does not decode (corrupt, or of another `CaseResult` shape) is
a miss and the case is scored again.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_doceval.kinds import CaseRef, Suite
from pytest_doceval.run.code_digest import environment_digest, json_digest, scoring_code_digest
from pytest_doceval.store import Store, file_digest

# Bumped when the key's recipe changes, so entries keyed the old way are never read.
KEY_VERSION = "doceval-score/2"  # 2: a CaseResult no longer restates suite, case, system


class SuiteFiles:
    """The digests of a suite folder's files, grouped as the key's rule says: the files of each
    case's own folder, and the rest (shared by every case). A case's folder is listed and its
    files hashed when that case first asks, and once: an xdist worker, or a ``-k`` run, walks
    and hashes the folders of its own cases and the shared files, not every case's (a walk of a
    1,000-case suite's folders was a tenth of a warm worker's time, in every worker)."""

    def __init__(
        self,
        folder: Path,
        cases: Iterable[str],
        *,
        skip: Iterable[Path] = (),
        outside: Iterable[Path] = (),
        suite_file: Path | None = None,
    ) -> None:
        self.folder = folder
        self._skipped = [str(p.resolve()) for p in skip]
        names = {c for c in cases if "/" not in c}
        top = _listing(folder)
        self._case_dirs = {name for name, _, is_dir, _ in top if is_dir and name in names}
        # A case folder's real path is the suite's and its name, unless it is a link.
        real = os.path.realpath(folder)
        self._case_reals = {
            name: os.path.realpath(path) if link else os.path.join(real, name)
            for name, path, _, link in top
            if name in self._case_dirs
        }
        # Paths as text: a `Path` made for every file of every case was a tenth of a key.
        self._own: dict[str, list[tuple[str, str]]] = {}  # filled as cases ask
        # Files or folders the suite names outside its folder (an annotations file elsewhere)
        # are inputs of every case.
        shared = [
            (f"{path}/{relative}", file)
            for path in outside
            for relative, file, _ in (_files(path) if path.is_dir() else [("", str(path), "")])
        ]
        inside: list[tuple[str, str, str]] = []
        for name, path, is_dir, _ in top:
            if name in self._case_dirs:
                continue
            inside += _files(path, f"{name}/") if is_dir else [(name, path, _real(path))]
        self._shared = shared + self._kept(sorted(inside))
        # suite.toml's bytes, read once per run, not once per test and again at its scoring.
        self.suite_toml = file_digest(suite_file or folder / "suite.toml")
        self._hashed: dict[str, str] = {}
        self._shared_digest: str | None = None
        self._all_digest: str | None = None

    def digest(self, case: str) -> str:
        """The digest of `case`'s inputs (see the module's rule); OSError when one of them
        cannot be read."""
        if case not in self._case_dirs:
            if self._all_digest is None:
                every = self._shared + [e for c in sorted(self._case_dirs) for e in self._of(c)]
                self._all_digest = json_digest(sorted(self._hashed_entries(every)))
            return self._all_digest
        if self._shared_digest is None:
            self._shared_digest = json_digest(self._hashed_entries(self._shared))
        return json_digest([self._shared_digest, self._hashed_entries(self._of(case))])

    def _of(self, case: str) -> list[tuple[str, str]]:
        found = self._own.get(case)
        if found is None:
            files = _files(os.path.join(self.folder, case), f"{case}/", real=self._case_reals[case])
            found = self._own[case] = self._kept(files)
        return found

    def _kept(self, files: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
        return [
            (relative, path)
            for relative, path, real in files
            if not (self._skipped and _within(real, self._skipped))
        ]

    def _hashed_entries(self, entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(relative, self._file_digest(path)) for relative, path in entries]

    def _file_digest(self, path: str) -> str:
        found = self._hashed.get(path)
        if found is None:
            found = self._hashed[path] = file_digest(path)
        return found


def _within(path: str, folders: Sequence[str]) -> bool:
    # Compared as text: `Path.parents` built a path per level, for every file of the suite.
    return any(path == f or path.startswith(os.path.join(f, "")) for f in folders)


def _listing(folder: Path) -> list[tuple[str, str, bool, bool]]:
    """`folder`'s entries that can be inputs (not hidden, not ``__pycache__``), with whether
    each is a folder (a link to one counts) and whether it is a link, sorted by name."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith(".") or entry.name == "__pycache__":
                continue
            found.append((entry.name, entry.path, entry.is_dir(), entry.is_symlink()))
    return sorted(found)


def _real(path: str) -> str:
    return os.path.realpath(path)


def _files(
    folder: str | Path, prefix: str = "", *, real: str | None = None
) -> list[tuple[str, str, str]]:
    """Every file under `folder` (symlinks followed, each folder once) with its path relative
    to it (after `prefix`) and its real path, sorted; hidden files and folders and
    ``__pycache__`` are not inputs. `real` is the folder's real path when the caller knows it.

    A folder that cannot be listed is left out, as `os.walk` does. Real paths are resolved
    only for the folder and for links: the one below a real folder is that folder's path and
    its name (resolving each path walked every folder above it again, a fifth of a
    millisecond a case)."""
    found: list[tuple[str, str, str]] = []
    seen: set[str] = set()

    def walk(path: str, real_path: str, relative: str) -> None:
        if real_path in seen:
            return
        seen.add(real_path)
        try:
            with os.scandir(path) as listing:
                # By name: a folder reached by two paths (a link to it, and itself) is listed
                # under the first, the same one in every run.
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            real_entry = (
                os.path.realpath(entry.path)
                if entry.is_symlink()
                else os.path.join(real_path, name)
            )
            if entry.is_dir():
                if name != "__pycache__":
                    walk(entry.path, real_entry, f"{relative}{name}/")
            else:
                found.append((f"{prefix}{relative}{name}", entry.path, real_entry))

    walk(str(folder), real if real is not None else os.path.realpath(folder), "")
    return sorted(found)


def project_settings(pyproject: Path) -> Any:
    """The ``[tool.doceval]`` table of `pyproject` (None without one; a broken file has
    already stopped the run when the project was loaded)."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return data.get("tool", {}).get("doceval")


def named_outside(suite: Suite) -> list[Path]:
    """The existing files and folders that the suite's ``[suite]`` table names (as a path
    from the suite's folder, or absolute) outside the suite's folder."""
    folder = suite.spec.path.resolve()
    found: list[Path] = []
    for value in suite.spec.table.values():
        if not isinstance(value, str) or not value or "\n" in value:
            continue
        try:
            path = (suite.spec.path / value).resolve()
            exists = path.exists()
        except (OSError, ValueError):
            continue
        if exists and path != folder and folder not in path.parents:
            found.append(path)
    return sorted(set(found))


class ScoreKeys:
    """The key each test's score is kept under in the run's store (the module's recipe)."""

    def __init__(self, store: Store, project_root: Path, *, not_inputs: Sequence[Path] = ()):
        self.store = store
        self.project_root = project_root
        self.not_inputs = tuple(not_inputs)  # reports, baselines, the store: never inputs
        self._suite_files: dict[Path, SuiteFiles] = {}
        self._project: str | None = None

    @property
    def enabled(self) -> bool:
        return self.store.reads or self.store.writes

    def key(
        self,
        suite: Suite,
        ref: CaseRef,
        *,
        stage_keys: Sequence[str] | None,
        previous_cache_key: str | None,
        baseline: Mapping[str, float] | None,
    ) -> str | None:
        """The key of `ref`'s result, or None when it cannot be made (it is then scored and
        not kept): the suite file cannot be read, or the kind's code cannot be found."""
        if not self.enabled:
            return None
        code = scoring_code_digest(type(suite))
        try:
            files = self._files(suite)
            suite_toml, inputs = files.suite_toml, files.digest(ref.case)
        except OSError:
            return None
        if code is None:
            return None
        return json_digest(
            {
                "version": KEY_VERSION,
                "kind": [type(suite).__module__, type(suite).__qualname__, suite.kind],
                "scoring_id": suite.scoring_id,
                "ref": [ref.case, ref.system, dict(ref.labels)],
                "suite_toml": suite_toml,
                "inputs": inputs,
                "stages": None if stage_keys is None else list(stage_keys),
                "previous_cache_key": previous_cache_key,
                "baseline": None if baseline is None else {k: baseline[k] for k in baseline},
                "code": code,
                "environment": environment_digest(),
                "project": self._project_digest(),
            }
        )

    def _files(self, suite: Suite) -> SuiteFiles:
        folder = suite.spec.path
        if folder not in self._suite_files:
            cases = [ref.case for ref in suite.case_refs()]
            self._suite_files[folder] = SuiteFiles(
                folder,
                cases,
                skip=self.not_inputs,
                outside=named_outside(suite),
                suite_file=suite.spec.file,
            )
        return self._suite_files[folder]

    def _project_digest(self) -> str:
        if self._project is None:
            self._project = json_digest(project_settings(self.project_root / "pyproject.toml"))
        return self._project
