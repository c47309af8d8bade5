"""The ranking index saved in a folder and shared by the processes using it: read when another
process wrote a newer one, written atomically, and locked while one process fits or saves."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import joblib
from filelock import FileLock, Timeout

from digest.rank.index import PaperIndex

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    """A complete index and the ingest sequence it covers (every paper numbered up to ``seq``)."""

    index: PaperIndex
    seq: int


class SavedIndex:
    """One saved index file (None paths: nothing is saved) and the lock file beside it."""

    def __init__(self, path: Path | None, lock_path: Path | None) -> None:
        self.path, self.lock_path = path, lock_path
        self.stamp: tuple[int, int] | None = None  # (mtime, size) of the file last read/written
        self.saved: Snapshot | None = None  # the snapshot last read from or written to the file

    def disk_stamp(self) -> tuple[int, int] | None:
        """(mtime, size) of the file now; None when there is none."""
        try:
            st = self.path.stat() if self.path else None
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size) if st else None

    def changed(self) -> bool:
        """True when the file on disk is not the one last read or written here."""
        stamp = self.disk_stamp()
        return stamp is not None and stamp != self.stamp

    def load(self) -> Snapshot | None:
        """The saved snapshot, or None (no file, or one that cannot be read: it is rebuilt)."""
        stamp = self.disk_stamp()
        if stamp is None:
            return None
        try:
            snap = joblib.load(self.path)
        except Exception as exc:  # noqa: BLE001 - a stale or truncated cache is simply rebuilt
            log.warning("ignoring unreadable index cache %s: %s", self.path, exc)
            return None
        if not (isinstance(snap, Snapshot) and isinstance(snap.index, PaperIndex)):
            return None
        self.stamp, self.saved = stamp, snap
        return snap

    def save(self, snap: Snapshot) -> None:
        """Write ``snap``; a folder that cannot be written is a warning (search still works)."""
        if not self.path:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            os.close(fd)
            joblib.dump(snap, tmp)
            os.replace(tmp, self.path)  # atomic: a reader never sees a half-written cache
        except OSError as exc:
            log.warning(
                "index cache not saved (%s): %s; search works, the next start refits",
                self.path,
                exc,
            )
            return
        self.stamp, self.saved = self.disk_stamp(), snap

    def save_if_newest(self, snap: Snapshot, wait: bool) -> None:
        """Save ``snap`` unless a newer one is on disk. Without ``wait`` the save is skipped when
        another process holds the lock (it is fitting and will save a newer index itself)."""
        if snap is self.saved:
            return
        try:
            with self.lock(None if wait else 0):
                if self.changed():  # someone saved since we looked
                    newer = self.load()
                    if newer is not None and newer.seq >= snap.seq:
                        return
                self.save(snap)
        except Timeout:
            return

    def remove(self) -> None:
        """Delete the file (its papers changed text), warning when it cannot be."""
        if self.path:
            try:
                self.path.unlink(missing_ok=True)
            except OSError as exc:
                log.warning("stale index cache %s not removed: %s", self.path, exc)

    @contextmanager
    def lock(self, timeout: float | None = None) -> Iterator[None]:
        """Held while fitting or saving, so processes sharing the folder fit each version once.

        Raises filelock's Timeout when ``timeout`` runs out (0: not waited for)."""
        if self.lock_path is None:
            yield
            return
        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(self.lock_path), timeout=-1 if timeout is None else timeout)
            lock.acquire()
        except Timeout:  # held elsewhere and not to be waited for: the caller skips its work
            raise
        except OSError as exc:  # a read-only folder: no sharing, but search still works
            log.warning("index lock %s not taken: %s", self.lock_path, exc)
            yield
            return
        try:
            yield
        finally:
            lock.release()
