"""A submission's archive, from a stranger, unpacked into a folder without trusting it.

A submission is a ``.tar``, ``.tar.gz`` or ``.zip`` of a bot's folder: its manifest and its
files. Nothing in it is believed: not its names, its types, its sizes, nor its count.
:func:`unpack` refuses, with an :class:`ArchiveError` naming the member,

- names that are absolute, that hold ``..``, a backslash or a control character, that repeat,
  or that go deeper than the limits allow;
- hard links, and symbolic links that are absolute or hold ``..`` (a link may only point
  down, so no chain of links leads out); a member written through a link;
- device files, FIFOs and anything else that is not a file, a folder or such a link;
- more members, or more bytes, than the limits allow: counted as the bytes come out of
  the decompressor, never taken from the archive's own headers.

Files keep only their executable bit. The folder's :class:`Contents` has a digest of
every path, kind, executable bit and content: the submission's address.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import struct
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

CHUNK = 1 << 16


class ArchiveError(ValueError):
    """An archive refused: the message names the member and what is wrong with it."""


@dataclass(frozen=True)
class ArchiveLimits:
    """What one submission may hold."""

    archive_bytes: int = 16 << 20
    """The archive as uploaded."""
    total_bytes: int = 64 << 20
    """Every file's bytes, unpacked, added up."""
    file_bytes: int = 32 << 20
    """One file's bytes, unpacked."""
    members: int = 2_000
    """Files, folders and links."""
    depth: int = 24
    """Folders deep."""
    name_bytes: int = 1_024
    """One member's path, in UTF-8."""


@dataclass(frozen=True)
class Contents:
    """What a submission's folder holds, and its address."""

    digest: str
    """SHA-256 (hex) of the canonical listing of every member: path, kind, executable bit,
    and the SHA-256 of its bytes (a link's, of its target)."""
    files: int
    total_bytes: int


@dataclass(frozen=True)
class _Member:
    name: str
    kind: str
    """``file``, ``dir`` or ``link``."""
    executable: bool = False
    target: str = ""
    """A link's target."""
    size: int = -1
    """What the archive claims; -1 when it does not say."""


def archive_kind(data: bytes) -> str:
    """``zip``, ``tar.gz`` or ``tar``, from the archive's first bytes; ArchiveError if none."""
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if data[:2] == b"\x1f\x8b":
        return "tar.gz"
    if data[257:262] == b"ustar":
        return "tar"
    raise ArchiveError("the submission is not a .tar, .tar.gz or .zip archive")


def unpack(data: bytes, into: Path, limits: ArchiveLimits = ArchiveLimits()) -> Contents:
    """Unpack the archive ``data`` into the folder ``into``, which must not exist yet; on
    any refusal the folder is left partly written, for the caller to remove."""
    if len(data) > limits.archive_bytes:
        raise ArchiveError(
            f"the archive is {len(data)} bytes, more than the {limits.archive_bytes} allowed"
        )
    kind = archive_kind(data)
    into.mkdir(mode=0o700)
    writer = _Writer(into, limits)
    if kind == "zip":
        _unpack_zip(data, writer, limits)
    else:
        stream: IO[bytes] = io.BytesIO(data)
        if kind == "tar.gz":
            # Capped as it decompresses: a header's sizes are the stranger's word.
            capped = _Capped(gzip.GzipFile(fileobj=stream), limits.total_bytes + (4 << 20))
            stream = io.BufferedReader(capped, CHUNK)
        _unpack_tar(stream, writer)
    if writer.count == 0:
        raise ArchiveError("the archive is empty")
    return writer.contents()


# -- reading the formats ---------------------------------------------------------------


class _Capped(io.RawIOBase):
    """A stream that refuses to give more than ``cap`` bytes."""

    def __init__(self, inner: gzip.GzipFile, cap: int) -> None:
        self._inner, self._left = inner, cap

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        try:
            data = self._inner.read(min(len(buffer), self._left + 1))
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise ArchiveError(f"the archive's compression is damaged: {exc}") from None
        if len(data) > self._left:
            raise ArchiveError("the archive unpacks to more bytes than the limit allows")
        self._left -= len(data)
        buffer[: len(data)] = data
        return len(data)


def _unpack_tar(stream: IO[bytes], writer: _Writer) -> None:
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for info in tar:
                writer.check_count()
                member = _tar_member(info)
                source = tar.extractfile(info) if member.kind == "file" else None
                writer.add(member, source)
    except tarfile.TarError as exc:
        raise ArchiveError(f"not a readable tar archive: {exc}") from None


def _tar_member(info: tarfile.TarInfo) -> _Member:
    name = info.name
    if info.isfile():
        return _Member(name, "file", bool(info.mode & 0o111), size=info.size)
    if info.isdir():
        return _Member(name, "dir")
    if info.issym():
        return _Member(name, "link", target=info.linkname)
    if info.islnk():
        raise ArchiveError(f"{_shown(name)}: a hard link; only files, folders and links down")
    what = "a FIFO" if info.isfifo() else "a device file" if info.isdev() else "not a file"
    raise ArchiveError(f"{_shown(name)}: {what}; only files, folders and links are taken")


def _zip_count(data: bytes) -> int | None:
    """The member count the zip's end record states, read before ``zipfile`` builds a list
    of them all; None if there is no end record (``zipfile`` refuses it then)."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 65_557))
    if end < 0 or end + 22 > len(data):
        return None
    (count,) = struct.unpack_from("<H", data, end + 10)
    # 0xFFFF: a ZIP64 record holds the real count; too many for us in any case.
    return int(count)


def _unpack_zip(data: bytes, writer: _Writer, limits: ArchiveLimits) -> None:
    count = _zip_count(data)
    if count is not None and count > limits.members:
        raise ArchiveError(
            f"the archive has {count} members, more than the {limits.members} allowed"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ArchiveError(f"not a readable zip archive: {exc}") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.members:
            raise ArchiveError(
                f"the archive has {len(infos)} members, more than the {limits.members} allowed"
            )
        for info in infos:
            writer.check_count()
            member = _zip_member(info)
            if member.kind == "link":
                with archive.open(info) as link:
                    target = link.read(limits.name_bytes + 1)
                member = _Member(member.name, "link", target=target.decode("utf-8", "replace"))
                writer.add(member, None)
            elif member.kind == "file":
                try:
                    with archive.open(info) as source:
                        writer.add(member, source)
                except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as exc:
                    raise ArchiveError(f"{_shown(member.name)}: cannot be read: {exc}") from None
                except NotImplementedError as exc:
                    raise ArchiveError(f"{_shown(member.name)}: {exc}") from None
            else:
                writer.add(member, None)


def _zip_member(info: zipfile.ZipInfo) -> _Member:
    name = info.filename
    mode = info.external_attr >> 16 if info.create_system == 3 else 0  # 3: made on Unix
    kind = stat.S_IFMT(mode)
    if info.is_dir() or kind == stat.S_IFDIR:
        return _Member(name.rstrip("/"), "dir")
    if kind == stat.S_IFLNK:
        return _Member(name, "link")
    if kind not in (0, stat.S_IFREG):
        raise ArchiveError(f"{_shown(name)}: a device file, FIFO or socket; only files are taken")
    return _Member(name, "file", bool(mode & 0o111), size=info.file_size)


# -- writing ---------------------------------------------------------------------------


class _Writer:
    """Checks each member and writes it under the root, keeping count of what it wrote."""

    def __init__(self, root: Path, limits: ArchiveLimits) -> None:
        self.root, self.limits = root, limits
        self.count = 0
        self.total = 0
        self.listing: dict[str, str] = {}
        """By path, the member's line of the canonical listing."""

    def check_count(self) -> None:
        if self.count >= self.limits.members:
            raise ArchiveError(
                f"the archive has more than the {self.limits.members} members allowed"
            )

    def add(self, member: _Member, source: IO[bytes] | None) -> None:
        self.count += 1
        if member.kind == "dir" and not [p for p in member.name.split("/") if p not in ("", ".")]:
            return  # the folder itself ("./", as tar -C folder . writes it)
        parts = _parts(member.name, self.limits)
        path = "/".join(parts)
        if path in self.listing:
            if member.kind == "dir" and self.listing[path].startswith("dir "):
                return  # made already, for a member inside it
            raise ArchiveError(f"{_shown(path)}: in the archive twice")
        parent = self.root
        for i, part in enumerate(parts[:-1]):
            parent = parent / part
            sub = "/".join(parts[: i + 1])
            if sub not in self.listing:
                self._mkdir(parent, sub)
            elif not self.listing[sub].startswith("dir "):
                raise ArchiveError(f"{_shown(path)}: inside {_shown(sub)}, which is not a folder")
        target = parent / parts[-1]
        if member.kind == "dir":
            self._mkdir(target, path)
        elif member.kind == "link":
            self._link(target, path, member.target)
        else:
            assert source is not None
            self._file(target, path, member, source)

    def _mkdir(self, at: Path, path: str) -> None:
        os.mkdir(at, 0o700)
        self.listing[path] = f"dir {path}"

    def _link(self, at: Path, path: str, target: str) -> None:
        if not target or target.startswith("/") or ".." in PurePosixPath(target).parts:
            raise ArchiveError(
                f"{_shown(path)}: a link to {_shown(target)}; a link may only point down, "
                "without '..', within the submission"
            )
        _parts(target, self.limits)
        os.symlink(target, at)
        self.listing[path] = f"link {path} {hashlib.sha256(target.encode()).hexdigest()}"

    def _file(self, at: Path, path: str, member: _Member, source: IO[bytes]) -> None:
        limits = self.limits
        if member.size > limits.file_bytes:
            raise ArchiveError(
                f"{_shown(path)}: {member.size} bytes, more than the {limits.file_bytes} allowed"
            )
        digest = hashlib.sha256()
        written = 0
        fd = os.open(at, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            for chunk in iter(lambda: source.read(CHUNK), b""):
                written += len(chunk)
                self.total += len(chunk)
                if written > limits.file_bytes:
                    raise ArchiveError(
                        f"{_shown(path)}: more than the {limits.file_bytes} bytes a file may have"
                    )
                if self.total > limits.total_bytes:
                    raise ArchiveError(
                        f"the archive unpacks to more than the {limits.total_bytes} bytes allowed "
                        f"(at {_shown(path)})"
                    )
                digest.update(chunk)
                out.write(chunk)
        mode = 0o755 if member.executable else 0o644
        os.chmod(at, mode)
        flag = "x" if member.executable else "-"
        self.listing[path] = f"file {path} {flag} {digest.hexdigest()}"

    def contents(self) -> Contents:
        listing = "\n".join(self.listing[p] for p in sorted(self.listing)) + "\n"
        files = sum(1 for line in self.listing.values() if line.startswith("file "))
        return Contents(hashlib.sha256(listing.encode()).hexdigest(), files, self.total)


def _parts(name: str, limits: ArchiveLimits) -> list[str]:
    """The path's parts, or ArchiveError saying what is wrong with the name."""
    shown = _shown(name)
    if not name or len(name.encode("utf-8", "replace")) > limits.name_bytes:
        raise ArchiveError(f"{shown}: a member's name must be 1 to {limits.name_bytes} bytes")
    if any(ord(c) < 32 or c == "\x7f" for c in name) or "\\" in name:
        raise ArchiveError(f"{shown}: a name with a control character or a backslash")
    if name.startswith("/"):
        raise ArchiveError(f"{shown}: an absolute path; members must be inside the folder")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"{shown}: a path with '..'; members must be inside the folder")
    if not parts:
        raise ArchiveError(f"{shown}: names no member")
    if len(parts) > limits.depth:
        raise ArchiveError(f"{shown}: deeper than the {limits.depth} folders allowed")
    return parts


def _shown(name: str) -> str:
    """A stranger's name, quoted, its control characters escaped, cut to a readable length."""
    return repr(name if len(name) <= 120 else name[:117] + "...")


def pack(folder: Path) -> bytes:
    """``folder`` as a .tar.gz whose bytes depend only on its files (names sorted, times
    and owners zeroed, links kept as links), so the same folder is the same upload."""
    out = io.BytesIO()

    def clean(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.mtime = 0
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for root, dirs, files in os.walk(folder, followlinks=False):
            dirs.sort()
            for name in sorted(dirs + files):
                path = Path(root) / name
                tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False,
                        filter=clean)  # fmt: skip
    return gzip.compress(out.getvalue(), mtime=0)
