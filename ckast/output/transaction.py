"""One run's change to an output directory, seen whole or not at all.

A run builds its complete tree in a staging directory beside the output directory, swaps the two in
one `renameat2(RENAME_EXCHANGE)`, then deletes the old tree. At every moment the output directory is
exactly what the previous completed run left or exactly what this run leaves; a run killed at any
point changes nothing there (the next run deletes its staging directory).

- Files whose bytes do not change are hard links of the old ones: same inode, same mtime.
- Files the previous run did not produce (by its manifest) are the user's, whatever their names:
  they are carried over as hard links, untouched, and a file this run would produce where one of them
  lies is refused.
- Runs into one directory take turns (`ckast.output.lock`); when the run ends nothing of it is left
  beside the directory (and a directory never created stays so).
- A signal (`ckast.interrupt`) stops a run before the swap (the directory unchanged) or after it (the
  new tree in place): the swap and what must follow it run to their end first. A signal whose exception
  was lost on its way (`ckast.interrupt.check`) stops the run when it starts or before its swap. The
  staging tree is deleted and the lock freed either way.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from ckast.errors import CkastError
from ckast.interrupt import Interrupted, check, deferred, settled

from .lock import DirectoryLock, lock_path

MANIFEST = "manifest.json"
OLD_STAMP = ".ckast-stamp.json"
"""Where ckast kept a run's stamp inside the tree before it moved out (`ckast.output.stamp`): a file of
ckast's, so the next run removes it."""


class OutputError(CkastError):
    """The output directory cannot take the run (one line; nothing was changed). The command line exits with
    `exit_status`."""

    exit_status = 1


@attrs.frozen
class Stage:
    """Where a run writes: the current tree (`old`, may not exist) and the staging tree (`new`).
    Picklable, so that rendering processes write their kernels' files themselves. `reuse` says whether
    `old` holds a previous run's tree (its manifest) whose files a write may keep as they are."""

    old: str
    new: str
    reuse: bool = True

    def write(self, rel: str, text: str, made_dirs: set[str] | None = None) -> bool:
        """Stage `text` at `rel`: a hard link of the current file if it holds exactly these bytes
        (False), else a new file (True). `made_dirs` remembers directories already created."""
        return self.put(rel, text, made_dirs)[0]

    def put(self, rel: str, text: str, made_dirs: set[str] | None = None) -> tuple[bool, list[int]]:
        """`write`, and the staged file's `ckast.data_files.file_states` entry ([size, mtime])."""
        data = text.encode()
        new = os.path.join(self.new, rel)
        parent = os.path.dirname(new)
        if made_dirs is None or parent not in made_dirs:
            os.makedirs(parent, exist_ok=True)
            if made_dirs is not None:
                made_dirs.add(parent)
        if self.reuse:
            old = os.path.join(self.old, rel)
            try:
                with open(old, "rb") as fh:
                    same = fh.read() == data
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                same = False
            if same:
                _carry(old, new)
                st = os.stat(new)
                return False, [st.st_size, st.st_mtime_ns]
        fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            st = os.fstat(fd)
        finally:
            os.close(fd)
        _checkpoint("write")
        return True, [st.st_size, st.st_mtime_ns]


class Transaction:
    """`with Transaction(out_dir) as tx:` write through `tx.stage`, then `tx.commit(files)`; leaving
    the block without a commit (an error) leaves the output directory as it was. OSErrors become
    one-line `OutputError`s. `owned`: the names of the files that are ckast's in a directory without a
    manifest (a model directory), instead of a previous run's manifest list. `kind`: what the run writes (a
    key of `places.KINDS`); the directory must be a place for it (`places`: else `PlaceError`)."""

    def __init__(self, out_dir: Path, on_wait: Callable[[str], None] | None = None,
                 owned: frozenset[str] | None = None, kind: str = "kernels") -> None:
        self.owned = owned
        self.kind = kind
        self.shown = Path(out_dir)
        self.out = Path(os.path.realpath(out_dir))
        self.staging, self.aside = leftover_paths(self.out)
        self.lock = DirectoryLock(self.out, on_wait)
        self.stage = Stage(str(self.out), str(self.staging))
        self.committed = False
        self.previous: set[str] = set()

    def __enter__(self) -> Transaction:
        check()  # a signal whose exception was lost on the way here
        self._check_target()
        try:
            self.lock.__enter__()
        except OSError as exc:
            raise self._error(exc) from exc
        try:
            _remove_leftovers(self.out)
            os.mkdir(self.staging)
            self.previous = self._previous_files()
            # Without a previous run's manifest no file there is ckast's to keep: every write is a new file.
            self.stage = attrs.evolve(self.stage, reuse=self.owned is None and MANIFEST in self.previous)
        except BaseException as exc:  # OSError, OutputError or a signal: the staging tree is deleted, the lock freed
            self._release()
            if isinstance(exc, OSError):
                raise self._error(exc) from exc
            raise
        return self

    def __exit__(self, typ: type | None, exc: BaseException | None, tb: object) -> None:
        self._release()
        if self.committed:
            _checkpoint("commit")
        if isinstance(exc, Interrupted):
            exc.where = f"{self.shown}: {'the new tree is in place' if self.committed else 'unchanged'}"
        if isinstance(exc, OSError):
            raise self._error(exc) from exc

    def _release(self) -> None:
        """Delete the staging tree (before the swap: this run's; after it: the old tree) and free the lock."""
        with deferred():
            try:
                shutil.rmtree(self.staging, ignore_errors=True)
            finally:
                self.lock.__exit__()

    def _previous_files(self) -> set[str]:
        """The files the previous run produced: its manifest's list and the manifest (and the stamp an
        older ckast kept in the tree), or the `owned` files. OutputError when there is a manifest that is not
        ckast's to read (which files there are ckast's is unknown then), PlaceError when the directory holds
        another kind of output (`places.check_kind`)."""
        from .places import check_kind

        manifest = check_kind(self.shown, self.kind)
        if self.owned is not None:
            return set(self.owned)
        if manifest is None:
            return {OLD_STAMP} if (self.out / OLD_STAMP).exists() else set()
        return {*(manifest.files or ()), MANIFEST, OLD_STAMP}

    def commit(self, produced: set[str], then: Callable[[], None] | None = None) -> int:
        """Carry the user's files over into the staging tree and swap it in (the old tree, now at the
        staging path, is deleted when the transaction ends). `then()` runs right after the swap, before
        a signal can stop the run (e.g. recording the run's stamp). Returns how many files of the
        previous run this one no longer produces."""
        previous = self.previous
        removed = 0
        seen: set[str] = set()
        existed = self.out.exists()
        if existed:
            for rel, entry in _walk(str(self.out)):
                seen.add(rel)
                new = os.path.join(self.staging, rel)
                if entry.is_dir(follow_symlinks=False):
                    os.makedirs(new, exist_ok=True)
                    os.chmod(new, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
                elif rel in produced:
                    if rel not in previous:
                        raise OutputError(f"{self.shown / rel} exists and was not written by ckast; "
                                          "move it away or choose another output directory")
                elif rel in previous:
                    removed += 1
                else:
                    _carry(entry.path, new)
            os.chmod(self.staging, stat.S_IMODE(os.stat(self.out).st_mode))
        _checkpoint("commit")
        check()
        with deferred():
            self._swap(existed)
            self.committed = True
            settled(f"{self.shown}: the new tree is in place")
            _checkpoint("commit")
            # The old tree is now at self.staging; files the user added to it during the run move over.
            for rel, entry in _walk(str(self.staging)) if existed else ():
                if rel not in seen and not entry.is_dir(follow_symlinks=False) and not os.path.lexists(self.out / rel):
                    os.makedirs(os.path.dirname(os.path.join(self.out, rel)), exist_ok=True)
                    os.rename(entry.path, os.path.join(self.out, rel))
            if then is not None:
                then()
        _checkpoint("commit")
        return removed

    def _swap(self, existed: bool) -> None:
        if not existed:
            os.rename(self.staging, self.out)
            return
        try:
            _exchange(str(self.staging), str(self.out))
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
                raise
            # This filesystem cannot exchange two directories: the output directory is briefly absent
            # (a run that dies here is repaired by the next one, in __enter__).
            os.rename(self.out, self.aside)
            os.rename(self.staging, self.out)
            os.rename(self.aside, self.staging)

    def _check_target(self) -> None:
        from .places import check_place

        check_place(self.shown)
        parent = self.out.parent
        if self.out == parent:
            raise OutputError(f"{self.shown}: cannot be the root directory")
        if not parent.is_dir():
            raise OutputError(f"{self.shown}: parent directory {parent} does not exist")
        if self.out.exists() and not self.out.is_dir():
            raise OutputError(f"{self.shown}: exists and is not a directory")
        if self.out.is_dir() and _read_only(self.out):
            raise OutputError(f"{self.shown}: directory is read-only")
        if _read_only(parent) and self.out.is_dir():
            raise OutputError(f"{self.shown}: its parent directory {parent} is read-only, and ckast writes there: "
                              "a run builds the new tree beside the directory and swaps the two in one step, so "
                              "that the directory is never half-written; write into a directory inside it instead "
                              f"(e.g. {self.shown / 'kernels'})")
        if _read_only(parent):
            raise OutputError(f"{self.shown}: cannot be created: its parent directory {parent} is read-only")

    def _error(self, exc: OSError) -> OutputError:
        where = f" ({exc.filename})" if exc.filename else ""
        state = "the new tree is in place" if self.committed else "the directory is unchanged"
        return OutputError(f"{self.shown}: {exc.strerror or exc}{where}; {state}")


def _read_only(directory: Path) -> bool:
    """Whether this process may not add entries to `directory` (for root, which may: whether its owner
    may not either)."""
    return not os.access(directory, os.W_OK) or not os.stat(directory).st_mode & stat.S_IWUSR


def remove_leftovers(out_dir: Path) -> None:
    """Delete what a killed run left beside `out_dir` (its staging tree, its lock file), unless a run is
    under way there now (a command that finds its tree up to date, and so starts no transaction, calls it
    first). PlaceError when `out_dir` is no place for a run (`places.check_place`)."""
    from .places import check_place

    check_place(out_dir)
    out = Path(os.path.realpath(out_dir))
    if not any(p.exists() for p in (*leftover_paths(out), lock_path(out))):
        return
    try:
        with DirectoryLock(out, wait=False):
            _remove_leftovers(out)
    except (BlockingIOError, OSError):
        pass


def leftover_paths(out: Path) -> tuple[Path, Path]:
    """The staging directory of a run into `out`, and where `_swap` puts the old tree aside."""
    return out.parent / f".{out.name}.ckast-stage", out.parent / f".{out.name}.ckast-old"


def _remove_leftovers(out: Path) -> None:
    staging, aside = leftover_paths(out)
    if aside.exists() and not out.exists():  # a run died between the two renames of _swap
        os.rename(aside, out)
    for leftover in (staging, aside):
        if leftover.exists():
            shutil.rmtree(leftover)


def _walk(root: str, rel: str = "") -> Iterator[tuple[str, os.DirEntry]]:
    """Every entry under `root` as (relative path, entry), directories before their contents."""
    with os.scandir(os.path.join(root, rel)) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            path = f"{rel}/{entry.name}" if rel else entry.name
            yield path, entry
            if entry.is_dir(follow_symlinks=False):
                yield from _walk(root, path)


def _carry(old: str, new: str) -> None:
    """`new` becomes the same file as `old` (a hard link; a copy with its times where links fail)."""
    os.makedirs(os.path.dirname(new), exist_ok=True)
    try:
        os.link(old, new, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EMLINK, errno.EXDEV):
            raise
        shutil.copy2(old, new, follow_symlinks=False)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: str, b: str) -> None:
    """Swap two paths atomically (Linux `renameat2(RENAME_EXCHANGE)`)."""
    import ctypes  # only a run that replaces a tree needs it

    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available")
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), b)


_KILL_AT = os.environ.get("CKAST_TEST_KILL_AT", "").split(":")
_KILLER = os.getpid()
_reached: Counter[str] = Counter()


def _checkpoint(step: str) -> None:
    """Test hook for the kill and interrupt tests: `CKAST_TEST_KILL_AT=<step>:<n>[:<SIGNAL>[:group]]`
    sends SIGKILL (or SIGINT, SIGTERM, ...) to this process (or to its process group) the n-th time it
    reaches `step` ("write": a file staged by this process, not by a rendering process; "commit": 1
    before the swap, 2 right after it, 3 when the part that follows the swap is done, 4 when the
    transaction has ended and the command goes on to print its summary)."""
    if len(_KILL_AT) >= 2 and os.getpid() == _KILLER:
        _reached[step] += 1
        if _KILL_AT[:2] == [step, str(_reached[step])]:
            sig = signal.Signals[f"SIG{_KILL_AT[2]}"] if len(_KILL_AT) > 2 else signal.SIGKILL
            if _KILL_AT[3:] == ["group"]:
                os.killpg(0, sig)
            else:
                os.kill(os.getpid(), sig)
