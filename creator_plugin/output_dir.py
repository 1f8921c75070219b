"""Output directories that appear whole or not at all, and never cost the user a file.

:class:`OutputDir` checks the target when it is created (before any long
computation), lets the caller write into a private temporary sibling, and
moves that into place with a rename that fails when anything is at the
target. A directory is replaced (``force=True``) only when a marker file
shows this tool wrote it and it holds nothing else: the marker lists exactly
the regular files in it (relative, normalised paths, no symbolic link on the
way) with their checksums. The old files are deleted one by one from that
list through directory descriptors that never follow links, so nothing the
tool did not write is ever deleted.

Interruptions: an exception at any point (``KeyboardInterrupt`` included)
leaves no temporary directory and no lost output; what is at the temporary
path decides the cleanup. The ``creator`` command's handlers of ``SIGINT``
and ``SIGTERM`` also hold a signal during the final steps (the marker,
``fsync`` of every file, the rename or, when replacing, an atomic exchange
of the two directories, and the deletion of the old files; see
:func:`hold_signal`), so it takes effect after them. A process killed
outright (``SIGKILL``, power loss) leaves its temporary directory; its owner
marker names the process, and the next run for the same output removes it
once that process is gone (:func:`stale_directories`).
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import errno
import hashlib
import json
import os
import shutil
import socket
import stat
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["MARKER", "OWNER_MARKER", "OutputDir", "OutputDirError", "hold_signal",
           "stale_directories"]

#: Name of the file recording that (and what) this tool wrote into a directory.
MARKER = ".creator-output.json"
#: Name of the file in a temporary directory naming the process writing it.
OWNER_MARKER = ".creator-tmp.json"
_TOOL = "creator-plugin"
_TEMP_KINDS = ("creator-tmp-", "creator-old-")


class OutputDirError(ValueError):
    """The output directory cannot be used or replaced (the message says why)."""


class OutputDir:
    """A checked output directory, written through a temporary sibling.

    Parameters
    ----------
    path : str or path-like
        The output directory.
    force : bool, default=False
        Replace an existing directory, provided this tool wrote it (its
        marker lists every file in it, with unchanged checksums).
    inputs : sequence of path-like
        Files the run reads: the output may not be one of them nor contain
        one.
    option : str, default="--out"
        How messages name the output.

    Raises
    ------
    OutputDirError
        At construction, when the output is the current directory or contains
        it, is or contains an input, is a file or a symbolic link, exists
        without ``force``, or exists but was not written by this tool (or
        was changed since).
    """

    def __init__(self, path, *, force: bool = False, inputs: Sequence = (),
                 option: str = "--out"):
        self.path = Path(os.path.abspath(path))
        self.option = option
        self._check_location(inputs)
        self._replaces: dict | None = None
        self.stale = _clean_stale(self.path)
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            self._check_parent_writable()
            return
        if stat.S_ISLNK(st.st_mode):
            raise OutputDirError(f"{option} {self.path} is a symbolic link; it is not replaced.")
        if not stat.S_ISDIR(st.st_mode):
            raise OutputDirError(f"{option} {self.path} exists and is not a directory.")
        if not force:
            raise OutputDirError(
                f"{option} {self.path} already exists; pass --force to replace a directory "
                "written by creator (anything else is never replaced)."
            )
        marker = _own_contents(self.path, option)
        self._replaces = {"ino": st.st_ino, "dev": st.st_dev, "run_id": marker["run_id"]}
        self._check_parent_writable()

    # ------------------------------------------------------------- checks
    def _check_location(self, inputs: Sequence) -> None:
        out = self.path.resolve()
        cwd = Path.cwd().resolve()
        if out == cwd or out in cwd.parents:
            raise OutputDirError(
                f"{self.option} {self.path} is the current directory or contains it; "
                "choose a new directory."
            )
        for inp in inputs:
            inp = Path(inp).resolve()
            if out == inp:
                raise OutputDirError(f"{self.option} {self.path} is the input file {inp}.")
            if out in inp.parents:
                raise OutputDirError(
                    f"{self.option} {self.path} contains the input file {inp}; choose a "
                    "directory of its own."
                )

    def _check_parent_writable(self) -> None:
        parent = self.path.parent
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir():
            raise OutputDirError(f"{self.option}: {parent} is not a directory.")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise OutputDirError(f"{self.option}: no permission to write in {parent}.")

    # ------------------------------------------------------------- writing
    @contextlib.contextmanager
    def write(self, parameters: dict) -> Iterator[Path]:
        """Yield a temporary directory to write into; move it into place on success.

        Parameters
        ----------
        parameters : dict
            JSON-able record of the run (stored in the marker).

        Raises
        ------
        OutputDirError
            Something appeared at (or changed) the output while the run went
            on: it is left as it is and the new results are not kept.
        OSError
            Writing failed (disk full, permissions); nothing is left behind.
        """
        self._old_marker: dict | None = None
        self._aside: Path | None = None
        created = _make_parents(self.path.parent)
        tmp = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.creator-tmp-",
                                    dir=self.path.parent))
        ours = os.lstat(tmp).st_ino
        try:
            _write_json(tmp / OWNER_MARKER, _owner())
            yield tmp
            with _signals_held():
                _write_marker(tmp, parameters)
                os.unlink(tmp / OWNER_MARKER)  # the output marker names the owner now
                _sync_tree(tmp)
                if self._replaces is None:
                    self._move_new(tmp)
                else:
                    self._replace(tmp)
                _fsync_dir(self.path.parent)
        except BaseException:
            self._clean_up(tmp, ours)
            for d in reversed(created):
                with contextlib.suppress(OSError):
                    d.rmdir()
            raise

    def _clean_up(self, tmp: Path, ours: int) -> None:
        """After a failure or an interruption: leave no temporary directory, lose no output.

        What is at ``tmp`` decides: this run's results (removed), nothing
        (they were moved into place: the output is complete), or, after the
        exchange of a replacement, the previous output (put back when it was
        not yet checked, else deleted from its marker as planned).
        """
        try:
            st = os.lstat(tmp)
        except FileNotFoundError:
            st = None
        if st is not None and st.st_ino != ours:  # the previous output, swapped out
            if self._old_marker is None:
                with contextlib.suppress(OSError):
                    _exchange(tmp, self.path)
                st = os.lstat(tmp) if os.path.lexists(tmp) else None
            else:
                _delete_own(tmp, self._old_marker)
                return
        if st is not None and st.st_ino == ours:
            shutil.rmtree(tmp, ignore_errors=True)  # a fresh directory this process created
        aside = self._aside
        if aside is not None and os.path.lexists(aside) and not os.path.lexists(self.path):
            with contextlib.suppress(OSError):
                _rename_noreplace(aside, self.path)  # the two-rename fallback, put back

    def _move_new(self, tmp: Path) -> None:
        try:
            _rename_noreplace(tmp, self.path)
        except FileExistsError:
            raise OutputDirError(
                f"{self.option} {self.path} appeared while this run was going on; it was "
                "left as it is and the results of this run were not kept."
            ) from None

    def _replace(self, tmp: Path) -> None:
        """Exchange ``tmp`` and the output atomically, check what came out, delete it.

        Where the exchange is not available (not Linux, or a file system
        without it), the output is renamed aside first and ``tmp`` moved into
        its place: between the two renames the previous output exists only
        under its hidden name.
        """
        exchanged = _exchange(tmp, self.path)
        aside = tmp if exchanged else (
            self.path.parent / f".{self.path.name}.creator-old-{uuid.uuid4().hex[:12]}")
        if not exchanged:
            try:
                _rename_noreplace(self.path, aside)
            except FileNotFoundError:
                raise OutputDirError(
                    f"{self.option} {self.path} was removed while this run was going on; the "
                    "results of this run were not kept."
                ) from None
            self._aside = aside
        st = os.lstat(aside)
        same = (st.st_ino, st.st_dev) == (self._replaces["ino"], self._replaces["dev"])
        try:
            if not same:
                raise OutputDirError(f"{self.option} {self.path} was replaced")
            marker = _own_contents(aside, self.option)
            if marker["run_id"] != self._replaces["run_id"]:
                raise OutputDirError(f"{self.option} {self.path} was rewritten")
        except OutputDirError as exc:
            try:
                if exchanged:
                    _exchange(tmp, self.path)  # back: the output as it was, ours in tmp
                else:
                    _rename_noreplace(aside, self.path)
                where = "it was left as it is"
            except OSError:
                where = f"it was moved to {aside}"
            raise OutputDirError(
                f"{exc} while this run was going on; {where} and the results of this run "
                "were not kept."
            ) from None
        if not exchanged:
            try:
                _rename_noreplace(tmp, self.path)
            except FileExistsError:
                raise OutputDirError(
                    f"{self.option} {self.path} appeared while it was being replaced; the "
                    f"previous output is kept in {aside} and the results of this run were not "
                    "kept."
                ) from None
            self._aside = None
        self._old_marker = marker
        _delete_own(aside, marker)


# ------------------------------------------------------------ interruptions
_HELD: list[int] | None = None


def hold_signal(signum: int) -> bool:
    """For a program's signal handler: whether to hold ``signum`` for now.

    True while an output is being moved into place (the signal is then
    recorded and raised as ``KeyboardInterrupt`` once that is done); False
    otherwise, when the handler should act at once. The ``creator`` command's
    handlers call it; the library installs no handler of its own.
    """
    if _HELD is None:
        return False
    _HELD.append(signum)
    return True


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """The final steps of an output: a handler that asks :func:`hold_signal` waits for them."""
    global _HELD
    outer = _HELD
    _HELD = [] if outer is None else outer
    try:
        yield
    finally:
        held, _HELD = _HELD, outer
    if outer is None and held:
        raise KeyboardInterrupt


def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """A process's start time in clock ticks since boot (Linux), to tell a reused pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def _owner() -> dict:
    """Who is writing: this process, on this host (since this boot)."""
    return {"tool": _TOOL, "pid": os.getpid(), "host": socket.gethostname(),
            "boot_id": _boot_id(), "start_time": _start_time(os.getpid())}


def _alive(owner: dict) -> bool | None:
    """Whether the process an owner record names still runs; None if that cannot be known."""
    pid = owner.get("pid")
    if owner.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 0:
        return None
    boot = _boot_id()
    if owner.get("boot_id") and boot and owner["boot_id"] != boot:
        return False  # the machine restarted since: no process of then runs
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's
    except OSError:
        return None
    started = owner.get("start_time")
    now = _start_time(pid)
    if started and now and started != now:
        return False  # the pid was reused by another process
    return True


def stale_directories(path) -> list[tuple[Path, dict | None]]:
    """Temporary directories this tool left beside ``path``, with their owner records.

    A temporary directory is ``.<name>.creator-tmp-*`` (a run writing) or
    ``.<name>.creator-old-*`` (a previous output being replaced), a
    directory (not a link) of the current user; its owner record is its
    :data:`OWNER_MARKER` or, once the results are complete, the ``pid`` and
    ``host`` of its :data:`MARKER` (None when neither can be read).
    """
    path = Path(os.path.abspath(path))
    found = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return []
    prefixes = tuple(f".{path.name}.{kind}" for kind in _TEMP_KINDS)
    for entry in entries:
        if not entry.name.startswith(prefixes):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            continue
        owner = None
        for name in (OWNER_MARKER, MARKER):
            try:
                record = json.loads(Path(entry.path, name).read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                continue
            if isinstance(record, dict) and record.get("tool") == _TOOL and "pid" in record:
                owner = record
                break
        found.append((Path(entry.path), owner))
    return sorted(found)


#: Seconds for which a temporary directory without an owner record is taken for
#: one whose run is starting (it writes the record right after creating it).
STARTING_SECONDS = 10.0


def _just_created(directory: Path) -> bool:
    try:
        return time.time() - os.lstat(directory).st_mtime < STARTING_SECONDS
    except OSError:
        return True  # gone already


def _clean_stale(path: Path) -> list[str]:
    """Remove the temporary directories of dead runs beside ``path``; report the others."""
    notes = []
    for directory, owner in stale_directories(path):
        alive = None if owner is None else _alive(owner)
        if alive is False:
            shutil.rmtree(directory, ignore_errors=True)
            done = "removed" if not os.path.lexists(directory) else "could not remove"
            notes.append(f"{done} the temporary directory {directory} left by an interrupted "
                         f"run (process {owner['pid']}, no longer running).")
        elif owner is not None and owner.get("pid") == os.getpid():
            continue  # this process's own, still being written
        elif owner is None and _just_created(directory):
            continue  # a run starting: its owner record is being written
        elif owner is None:
            notes.append(f"{directory} looks like a temporary directory of creator but names "
                         "no process; it is left as it is (remove it if no run is going on).")
        else:
            state = "still runs" if alive else "cannot be checked from here"
            notes.append(f"{directory} is the temporary directory of process {owner['pid']} "
                         f"on {owner.get('host')!r}, which {state}; it is left as it is.")
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=3)
    return notes


# ------------------------------------------------------------------ marker
def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _walk(root: Path) -> tuple[list[str], list[str], list[str]]:
    """Relative POSIX paths of the regular files, directories and other entries under ``root``.

    Nothing is followed: a symbolic link (to a file or a directory) is an
    "other" entry, and so is anything that is neither a file nor a directory.
    """
    files, dirs, other = [], [], []

    def visit(path: Path, rel: str) -> None:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_symlink():
                other.append(name)
            elif entry.is_dir(follow_symlinks=False):
                dirs.append(name)
                visit(Path(entry.path), name)
            elif entry.is_file(follow_symlinks=False):
                files.append(name)
            else:
                other.append(name)

    visit(root, "")
    return files, dirs, other


def _write_marker(directory: Path, parameters: dict) -> None:
    from . import __version__

    files, _, _ = _walk(directory)
    marker = {
        "tool": _TOOL,
        "version": __version__,
        "run_id": uuid.uuid4().hex,
        **{k: v for k, v in _owner().items() if k != "tool"},
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "parameters": parameters,
        "files": {rel: _digest(directory / rel) for rel in files if rel != OWNER_MARKER},
    }
    _write_json(directory / MARKER, marker)


def _write_json(target: Path, record: dict) -> None:
    """Write ``record`` whole or not at all: a reader never sees part of the file."""
    part = target.with_name(target.name + ".part")
    with open(part, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=2, default=str)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(part, target)


def _sync_tree(root: Path) -> None:
    """``fsync`` every file and directory under ``root``, so a rename publishes whole files."""
    files, dirs, _ = _walk(root)
    for rel in files:
        fd = os.open(root / rel, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for rel in [*dirs, ""]:
        _fsync_dir(root / rel)


def _fsync_dir(directory: Path) -> None:
    """Make renames and new entries in ``directory`` durable (a no-op where not possible)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _valid_entry(rel, digest) -> bool:
    """Whether a marker entry is a normalised relative path with a SHA-256 checksum."""
    if not isinstance(rel, str) or not isinstance(digest, str):
        return False
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        return False
    if not rel or "\x00" in rel or rel.startswith("/") or "\\" in rel:
        return False
    parts = rel.split("/")
    return all(part not in ("", ".", "..") for part in parts) and rel != MARKER


def _own_contents(directory: Path, option: str) -> dict:
    """The marker of ``directory`` if this tool wrote everything in it, unchanged.

    The marker must list exactly the regular files found under ``directory``
    (relative, normalised paths, each with its SHA-256), and the directory may
    hold nothing else: no unlisted file, no directory that holds no listed
    file, no symbolic link, no other kind of entry.
    """
    refuse = f"{option} {directory} was not written by creator (or was changed since)"
    try:
        marker = json.loads((directory / MARKER).read_text(encoding="utf-8"))
        ok = (isinstance(marker, dict) and marker.get("tool") == _TOOL
              and isinstance(marker.get("files"), dict) and isinstance(marker.get("run_id"), str))
    except (OSError, ValueError, RecursionError):
        ok = False
    if not ok:
        raise OutputDirError(f"{refuse}: it has no valid {MARKER} marker; it is not replaced.")
    bad = [repr(rel) for rel, digest in marker["files"].items() if not _valid_entry(rel, digest)]
    if bad:
        raise OutputDirError(
            f"{refuse}: its marker lists entries that are not files creator writes "
            f"({_some(bad)}); it is not replaced."
        )
    files, dirs, other = _walk(directory)
    listed = set(marker["files"])
    needed = {"/".join(rel.split("/")[:i]) for rel in listed for i in range(1, rel.count("/") + 1)}
    extra = ([f for f in files if f != MARKER and f not in listed] + other
             + [d for d in dirs if d not in needed])
    if extra:
        raise OutputDirError(
            f"{refuse}: it holds entries creator did not write ({_some(extra)}); it is not "
            "replaced. Move them away or choose another directory."
        )
    missing = sorted(listed - set(files))
    if missing:
        raise OutputDirError(
            f"{refuse}: files its marker lists are missing or not regular files "
            f"({_some(missing)}); it is not replaced."
        )
    changed = [f for f in sorted(listed) if _digest(directory / f) != marker["files"][f]]
    if changed:
        raise OutputDirError(
            f"{refuse}: files were modified after creator wrote them ({_some(changed)}); "
            "it is not replaced."
        )
    return marker


def _some(names: list[str], n: int = 5) -> str:
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _delete_own(directory: Path, marker: dict) -> None:
    """Delete the files ``marker`` lists, then the directories they leave, then ``directory``.

    Every path is walked one component at a time from a descriptor of
    ``directory`` opened without following links; a component that is a
    link or of the wrong kind stops the deletion of that entry (it was
    validated moments before, so that means someone changed it since) and
    the old directory is then left in place with a warning naming it.
    """
    left = []
    root = os.open(directory, _OPEN_DIR)
    try:
        for rel in [*marker["files"], MARKER]:
            *parents, name = rel.split("/")
            fds = []
            try:
                fd = root
                for part in parents:
                    fd = os.open(part, _OPEN_DIR, dir_fd=fd)
                    fds.append(fd)
                if not stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    left.append(rel)
                    continue
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
            except OSError:
                left.append(rel)
            finally:
                for f in fds:
                    os.close(f)
        dirs = sorted({"/".join(rel.split("/")[:i]) for rel in marker["files"]
                       for i in range(1, rel.count("/") + 1)},
                      key=lambda d: d.count("/"), reverse=True)
        for d in dirs:
            with contextlib.suppress(FileNotFoundError):
                try:
                    os.rmdir(d, dir_fd=root)
                except OSError:
                    left.append(d + "/")
    finally:
        os.close(root)
    try:
        os.rmdir(directory)
    except OSError:
        import warnings

        warnings.warn(
            f"the previous output was moved to {directory} but not deleted: it changed while "
            f"this run was going on ({_some(left) if left else 'new entries'}).",
            UserWarning, stacklevel=3)


def _make_parents(parent: Path) -> list[Path]:
    missing = []
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    created = []
    for d in reversed(missing):
        os.mkdir(d)
        created.append(d)
    return created


# ------------------------------------------------------------------ rename
def _renameat2():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn


_RENAMEAT2 = _renameat2()
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` atomically (Linux ``renameat2(RENAME_EXCHANGE)``).

    Returns False where that is not available (the caller falls back to two
    renames); other failures raise ``OSError``.
    """
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _rename_noreplace(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst``; ``FileExistsError`` if anything is at ``dst``.

    Linux: ``renameat2(RENAME_NOREPLACE)``, atomic. Elsewhere (or on file
    systems without it): ``dst`` is reserved with ``mkdir``, which fails if
    anything is there, and ``src`` renamed onto that empty directory; POSIX
    ``rename`` refuses a non-empty target, so nothing is ever replaced.
    """
    if _RENAMEAT2 is not None:
        if _RENAMEAT2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst),
                      _RENAME_NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(err, os.strerror(err), str(dst))
    if os.name == "nt":
        os.rename(src, dst)  # Windows never replaces an existing target
        return
    if not os.path.lexists(src):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(src))
    os.mkdir(dst)
    try:
        os.rename(src, dst)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.rmdir(dst)
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst)) from None
        raise
