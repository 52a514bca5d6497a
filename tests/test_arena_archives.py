"""A submission's archive is unpacked without trusting it: each attack is a real archive,
unpacked for real, and refused with the member named; a fair bot folder comes out whole,
with the same address whatever archive carried it."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from tournaments.arena.archives import ArchiveError, ArchiveLimits, archive_kind, unpack

BOT = {
    "bot.toml": b'name = "mybot"\ncommand = ["python3", "bot.py"]\n',
    "bot.py": b"print('hello')\n",
    "lib/helpers.py": b"X = 1\n",
}


def tar_of(
    members: list[tuple[str, bytes | None, int]],
    *,
    gz: bool = True,
    pax: dict[str, str] | None = None,
) -> bytes:
    """A tar of (name, bytes, type) members: bytes None for a folder, else a file; a type
    other than REGTYPE/DIRTYPE makes that kind of member, its bytes the link target."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz" if gz else "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            if pax:
                info.pax_headers = dict(pax)
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.type, info.linkname = kind, data.decode()
                tar.addfile(info)
            elif kind != tarfile.REGTYPE:
                info.type = kind
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o755 if name.endswith(".sh") else 0o644
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def bot_tar(**extra: bytes) -> bytes:
    files = {**BOT, **extra}
    return tar_of(
        [("./", None, 0), ("lib", None, 0)] + [(n, d, tarfile.REGTYPE) for n, d in files.items()]
    )


def zip_of(
    files: dict[str, bytes], *, links: dict[str, str] | None = None, scripts_run: bool = True
) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            executable = scripts_run and name.endswith(".sh")
            info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
            archive.writestr(info, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return out.getvalue()


def refused(data: bytes, tmp_path: Path, match: str, limits: ArchiveLimits | None = None) -> None:
    before = set(tmp_path.iterdir())
    into = tmp_path / f"out{len(before)}"
    with pytest.raises(ArchiveError, match=match):
        unpack(data, into, limits or ArchiveLimits())
    # Nothing was written outside the folder it was given.
    assert set(tmp_path.iterdir()) <= before | {into}
    assert not (tmp_path.parent / "outside.txt").exists()


# -- a fair folder ------------------------------------------------------------------------


def test_a_bot_folder_comes_out_whole_and_its_address_does_not_depend_on_the_archive(
    tmp_path: Path,
) -> None:
    from_tar = unpack(bot_tar(**{"run.sh": b"#!/bin/sh\n"}), tmp_path / "a")
    from_zip = unpack(zip_of({**BOT, "run.sh": b"#!/bin/sh\n"}), tmp_path / "b")
    plain = unpack(
        tar_of(
            [(n, d, tarfile.REGTYPE) for n, d in {**BOT, "run.sh": b"#!/bin/sh\n"}.items()],
            gz=False,
        ),
        tmp_path / "c",
    )
    assert from_tar.digest == from_zip.digest == plain.digest
    assert from_tar.files == 4 and from_tar.total_bytes == sum(map(len, BOT.values())) + 10
    for folder in ("a", "b", "c"):
        root = tmp_path / folder
        assert (root / "lib" / "helpers.py").read_bytes() == b"X = 1\n"
        assert os.access(root / "run.sh", os.X_OK) and not os.access(root / "bot.py", os.X_OK)
    # A byte changed, or an executable bit, is another submission.
    other = unpack(bot_tar(**{"run.sh": b"#!/bin/sh \n"}), tmp_path / "d")
    assert other.digest != from_tar.digest
    not_executable = zip_of({**BOT, "run.sh": b"#!/bin/sh\n"}, scripts_run=False)
    assert unpack(not_executable, tmp_path / "e").digest != from_tar.digest


def test_links_that_point_down_are_kept(tmp_path: Path) -> None:
    data = tar_of([
        ("bot.py", b"1\n", tarfile.REGTYPE), ("lib", None, 0),
        ("lib/x.py", b"2\n", tarfile.REGTYPE), ("main.py", b"bot.py", tarfile.SYMTYPE),
        ("lib2", b"lib", tarfile.SYMTYPE),
    ])  # fmt: skip
    unpack(data, tmp_path / "out")
    assert os.readlink(tmp_path / "out" / "main.py") == "bot.py"
    assert (tmp_path / "out" / "lib2" / "x.py").read_bytes() == b"2\n"


def test_archive_kinds_are_told_by_their_bytes_not_their_names() -> None:
    assert archive_kind(bot_tar()) == "tar.gz"
    assert archive_kind(zip_of(BOT)) == "zip"
    with pytest.raises(ArchiveError, match=r"not a \.tar, \.tar\.gz or \.zip"):
        archive_kind(b"#!/bin/sh\nrm -rf /\n")


# -- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("/etc/cron.d/evil", "absolute path"),
        ("../../outside.txt", r"'\.\.'"),
        ("lib/../../outside.txt", r"'\.\.'"),
        ("lib\\..\\evil", "backslash"),
        ("evil\x1b[2Jname", "control character"),
        ("/".join(["d"] * 30) + "/deep", "deeper than"),
    ],
)
def test_names_leading_out_or_hiding_are_refused(name: str, match: str, tmp_path: Path) -> None:
    refused(tar_of([(name, b"x", tarfile.REGTYPE)]), tmp_path, match)
    refused(zip_of({name: b"x"}), tmp_path, match)


def test_a_member_twice_is_refused(tmp_path: Path) -> None:
    data = tar_of([("bot.py", b"1", tarfile.REGTYPE), ("./bot.py", b"2", tarfile.REGTYPE)])
    refused(data, tmp_path, "'bot.py': in the archive twice")


# -- links and special files --------------------------------------------------------------


@pytest.mark.parametrize("target", ["/etc/passwd", "../outside", "lib/../../outside", "lib/.."])
def test_links_leading_up_or_out_are_refused(target: str, tmp_path: Path) -> None:
    refused(
        tar_of([("lib", None, 0), ("evil", target.encode(), tarfile.SYMTYPE)]),
        tmp_path,
        "a link to",
    )
    refused(zip_of({}, links={"evil": target}), tmp_path, "a link to")


def test_a_chain_of_links_cannot_climb_out(tmp_path: Path) -> None:
    # Each hop looks inside on its own: up -> ../.. from d1/d2 is the root; x -> l1/up/..
    # would be the root's parent. Any '..' in a link is refused, so no chain can be built.
    data = tar_of([
        ("d1", None, 0), ("d1/d2", None, 0), ("l1", b"d1/d2", tarfile.SYMTYPE),
        ("d1/d2/up", b"../..", tarfile.SYMTYPE), ("x", b"l1/up/..", tarfile.SYMTYPE),
    ])  # fmt: skip
    refused(data, tmp_path, r"'d1/d2/up': a link to '\.\./\.\.'")


def test_writing_through_a_link_is_refused(tmp_path: Path) -> None:
    # The link itself points down; a later member inside it would be written elsewhere.
    data = tar_of(
        [("lib", None, 0), ("via", b"lib", tarfile.SYMTYPE), ("via/x.py", b"1", tarfile.REGTYPE)]
    )
    refused(data, tmp_path, "inside 'via', which is not a folder")


@pytest.mark.parametrize(
    ("kind", "what"),
    [(tarfile.LNKTYPE, "a hard link"), (tarfile.CHRTYPE, "a device file"),
     (tarfile.BLKTYPE, "a device file"), (tarfile.FIFOTYPE, "a FIFO")],
)  # fmt: skip
def test_hard_links_devices_and_fifos_are_refused(kind: bytes, what: str, tmp_path: Path) -> None:
    refused(tar_of([("bot.py", b"1", tarfile.REGTYPE), ("evil", b"bot.py", kind)]), tmp_path, what)


def test_a_zip_device_file_is_refused(tmp_path: Path) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        info = zipfile.ZipInfo("evil")
        info.create_system = 3
        info.external_attr = (stat.S_IFCHR | 0o666) << 16
        archive.writestr(info, b"")
    refused(out.getvalue(), tmp_path, "device file")


# -- bombs --------------------------------------------------------------------------------


def test_a_gzip_bomb_stops_at_the_limit_not_at_its_end(tmp_path: Path) -> None:
    zeros = tar_of([("big.bin", b"\0" * (40 << 20), tarfile.REGTYPE)])
    assert len(zeros) < 200_000  # 40 MiB that travel as tens of kilobytes
    limits = ArchiveLimits(total_bytes=8 << 20, file_bytes=4 << 20)
    refused(zeros, tmp_path, "'big.bin': 41943040 bytes, more than the 4194304 allowed", limits)


def test_a_zip_bomb_is_counted_as_it_inflates(tmp_path: Path) -> None:
    # Each member's stated size is small enough; what comes out is not.
    data = zip_of({f"part{i}.bin": b"\0" * (3 << 20) for i in range(4)})
    limits = ArchiveLimits(total_bytes=8 << 20, file_bytes=4 << 20)
    refused(data, tmp_path, "unpacks to more than the 8388608 bytes allowed", limits)


def test_a_header_bomb_is_stopped_by_the_decompressed_cap(tmp_path: Path) -> None:
    # A pax header is read whole by tarfile: 20 MiB of it, from a few kilobytes.
    data = tar_of([("bot.py", b"1", tarfile.REGTYPE)], pax={"comment": "x" * (20 << 20)})
    assert len(data) < 100_000
    refused(
        data,
        tmp_path,
        "unpacks to more bytes than the limit allows",
        ArchiveLimits(total_bytes=4 << 20),
    )


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_a_count_bomb_is_refused(kind: str, tmp_path: Path) -> None:
    names = {f"f{i}": b"" for i in range(300)}
    data = (
        tar_of([(n, d, tarfile.REGTYPE) for n, d in names.items()])
        if kind == "tar"
        else zip_of(names)
    )
    refused(
        data,
        tmp_path,
        "more than the 200 members allowed|300 members, more than the 200",
        ArchiveLimits(members=200),
    )


def test_an_oversized_upload_is_refused_before_it_is_read(tmp_path: Path) -> None:
    refused(
        bot_tar() + b"\0" * 2048,
        tmp_path,
        "more than the 1000 allowed",
        ArchiveLimits(archive_bytes=1000),
    )


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (gzip.compress(b"not a tar at all" * 100), "not a readable tar archive"),
        (b"\x1f\x8b\x08\x00" + b"\xff" * 64, "compression is damaged|not a readable tar"),
        (b"PK\x03\x04" + b"\0" * 64, "not a readable zip archive"),
        (tar_of([]), "the archive is empty"),
    ],
)
def test_damaged_archives_get_one_clear_error(data: bytes, match: str, tmp_path: Path) -> None:
    refused(data, tmp_path, match)
