"""The record index on disk: generations of .npy files that every process maps, never reads in.

A store's index folder holds one sub-folder per generation, named by the change sequence it
reflects and the time it was written (`g<seq>-<nanoseconds>-<token>`: of two of one sequence, a
rebuild's and the one it replaces, the later sorts last), with each array in a .npy file of its
own and a manifest. Processes open a generation's files as copy-on-write memory maps: the
operating system shares their pages among every gunicorn worker and agent process, a new process
reads nothing up front, and a row a process changes costs it a private copy of that page only.

A generation is written aside (`tmp-<token>`), its manifest last, and renamed into place whole:
a crash while writing leaves the previous generation as it was, and the abandoned folder is
removed later. The manifest records, per file, its shape, dtype, size, modification time and
CRC-32. Before a generation is served it is checked: every file must still have its size and
modification time (a truncated, extended or rewritten file changes them) and a .npy header of
its shape and dtype, and a file up to VERIFY_AT_OPEN_BYTES its checksum too. Larger files are
checksummed by `open(verify=True)` (the store's consistency check): reading 1.9 GB at 1M
records would cost every start the second the mapping saves. A generation that fails is removed, never served.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import logging
import os
import shutil
import time
import uuid
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

log = logging.getLogger(__name__)

FORMAT = 4
VERIFY_AT_OPEN_BYTES = 16 * 2**20
SUPERSEDED_GRACE_SECONDS = 60.0
"""A generation stays this long after a newer one appears: a process that chose it just before
may still be opening its files (one that has mapped them keeps them, removed or not)."""
ABANDONED_SECONDS = 3600.0
"""A folder still being written after this long was left by a crashed writer."""
_CHUNK = 2**24
_MANIFEST = "manifest.json"

Parts = np.ndarray | Sequence[np.ndarray]
"""An array to write, or the parts of one along its first axis (a mapped matrix and the rows
added since: joining them in memory first would copy the whole matrix)."""


class CorruptGeneration(ValueError):
    """A generation whose files are not those its manifest describes."""


@dataclass(frozen=True)
class Generation:
    """One generation, opened: which store and change sequence it reflects, when it was written,
    and its arrays (memory maps)."""

    name: str
    store_id: str
    seq: int
    written_at: float
    arrays: dict[str, np.ndarray]


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


def _write_array(path: Path, value: Parts) -> tuple[tuple[int, ...], np.dtype]:
    """One .npy file, written from its parts without joining them and flushed to disk; returns
    the array's shape and dtype."""
    parts = [value] if isinstance(value, np.ndarray) else list(value)
    first = parts[0]
    shape = (sum(len(part) for part in parts), *first.shape[1:])
    with open(path, "wb") as file:
        header = {"descr": np.lib.format.dtype_to_descr(first.dtype), "fortran_order": False, "shape": shape}
        np.lib.format.write_array_header_2_0(file, header)
        for part in parts:
            np.ascontiguousarray(part, dtype=first.dtype).tofile(file)
        file.flush()
        os.fsync(file.fileno())
    return shape, first.dtype


def _sync_folder(path: Path) -> None:
    folder = os.open(path, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


class Generations:
    """The generations in one index folder: the newest, opening one, writing one, removing the old."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    def stamp(self) -> int:
        """The folder's modification time: it changes whenever a generation appears or goes, so
        a process learns of a new one with a stat per search, not a listing."""
        try:
            return self.root.stat().st_mtime_ns
        except OSError:
            return 0

    def names(self) -> list[str]:
        """The complete generations, oldest first (their names sort so)."""
        try:
            names = [entry.name for entry in os.scandir(self.root) if entry.name.startswith("g") and entry.is_dir()]
        except OSError:
            return []
        return sorted(names)

    def manifest(self, name: str) -> dict:
        """What a generation's manifest says (its store, sequence, and files), checked against
        its own checksum; CorruptGeneration when it cannot be read so."""
        try:
            manifest = json.loads((self.root / name / _MANIFEST).read_text())
            if manifest.pop("crc32") != zlib.crc32(json.dumps(manifest, sort_keys=True).encode()):
                raise CorruptGeneration("its manifest does not match its checksum")
            if manifest["format"] != FORMAT:
                raise CorruptGeneration(f"format {manifest['format']}, not {FORMAT}")
        except CorruptGeneration:
            raise
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise CorruptGeneration(str(error)) from error
        return manifest

    def open(self, name: str, *, verify: bool = False) -> Generation:
        """The generation's arrays, mapped, once its files are checked (every checksum with
        `verify`); CorruptGeneration when they are not as written."""
        folder = self.root / name
        manifest = self.manifest(name)
        try:
            arrays = {}
            for array, expected in manifest["files"].items():
                path = folder / f"{array}.npy"
                found = path.stat()
                if (found.st_size, found.st_mtime_ns) != (expected["bytes"], expected["mtime_ns"]):
                    raise CorruptGeneration(f"{path.name} was changed after it was written")
                if (verify or found.st_size <= VERIFY_AT_OPEN_BYTES) and _crc(path) != expected["crc32"]:
                    raise CorruptGeneration(f"{path.name} does not match its checksum")
                mapped = np.load(path, mmap_mode="c", allow_pickle=False)
                if list(mapped.shape) != expected["shape"] or mapped.dtype.str != expected["dtype"]:
                    raise CorruptGeneration(f"{path.name} holds {mapped.dtype.str}{mapped.shape}")
                arrays[array] = mapped
        except CorruptGeneration:
            raise
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise CorruptGeneration(str(error)) from error
        return Generation(name, manifest["store_id"], manifest["seq"], manifest["written_at"], arrays)

    def discard(self, name: str, reason: object) -> None:
        """Remove a generation found corrupt, so that no process serves it (one that another
        process removed as superseded meanwhile is simply gone)."""
        if not (self.root / name).exists():
            return
        log.warning("removing the search index generation %s: %s", self.root / name, reason)
        shutil.rmtree(self.root / name, ignore_errors=True)

    def write(self, store_id: str, seq: int, arrays: Mapping[str, Parts]) -> str:
        """A new generation of these arrays, complete before its name appears; returns its name."""
        self.root.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex
        aside = self.root / f"tmp-{token}"
        aside.mkdir()
        try:
            files = {}
            for array, value in arrays.items():
                path = aside / f"{array}.npy"
                shape, dtype = _write_array(path, value)
                found = path.stat()
                files[array] = {
                    "shape": list(shape),
                    "dtype": dtype.str,
                    "bytes": found.st_size,
                    "mtime_ns": found.st_mtime_ns,
                    "crc32": _crc(path),
                }
            manifest = {"format": FORMAT, "store_id": store_id, "seq": seq, "written_at": time.time(), "files": files}
            manifest["crc32"] = zlib.crc32(json.dumps(manifest, sort_keys=True).encode())
            with open(aside / _MANIFEST, "w") as file:
                json.dump(manifest, file)
                file.flush()
                os.fsync(file.fileno())
            name = f"g{seq:016d}-{time.time_ns():020d}-{token[:8]}"
            os.replace(aside, self.root / name)
            _sync_folder(self.root)  # the rename itself survives a power cut
        except BaseException:
            shutil.rmtree(aside, ignore_errors=True)
            raise
        return name

    def remove_unused(self, store_id: str) -> None:
        """Remove the generations of another store (the folder outlived a recreated store),
        each one of this store superseded for SUPERSEDED_GRACE_SECONDS (counted from when the
        next was written), and folders abandoned by crashed writers."""
        now = time.time()
        ours = []
        for name in self.names():
            try:
                manifest = json.loads((self.root / name / _MANIFEST).read_text())
                if manifest["store_id"] != store_id:
                    shutil.rmtree(self.root / name, ignore_errors=True)
                else:
                    ours.append((name, float(manifest["written_at"])))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # going away, or damaged: discarded when a process opens it
        for (name, _), (_, next_written_at) in itertools.pairwise(ours):
            if now - next_written_at > SUPERSEDED_GRACE_SECONDS:
                shutil.rmtree(self.root / name, ignore_errors=True)
        for aside in self.root.glob("tmp-*"):
            try:
                if now - aside.stat().st_mtime > ABANDONED_SECONDS:
                    shutil.rmtree(aside, ignore_errors=True)
            except OSError:
                pass

    def remove_all_but(self, keep: str) -> int:
        """Remove every generation but `keep` now, without the grace of remove_unused (after an
        erasure no file may keep a removed word; a process that still maps one keeps its pages
        until it moves on, but no file holds them). Returns how many went."""
        removed = 0
        for name in self.names():
            if name != keep:
                shutil.rmtree(self.root / name, ignore_errors=True)
                removed += 1
        for aside in self.root.glob("tmp-*"):
            shutil.rmtree(aside, ignore_errors=True)
        return removed

    def wait_for_writer(self, timeout: float) -> IO[str] | None:
        """claim_writer, tried until `timeout` seconds have passed (None then)."""
        deadline = time.monotonic() + timeout
        while (claim := self.claim_writer()) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        return claim

    def claim_writer(self) -> IO[str] | None:
        """The right to write the next generation, or None while another thread or process
        holds it (they skip, not wait): an advisory lock on a file in the folder, held until the
        returned file is closed."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            lock = open(self.root / "writer.lock", "a")  # noqa: SIM115 - the caller closes it
        except OSError:
            return None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            return None
        return lock
