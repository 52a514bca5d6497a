"""A submission built in the sandbox: its manifest's ``build`` command, run once, with the
host's toolchains read-only, no network, and limits of its own.

The build works on a copy of the submission in the sandbox's private tmpfs (so
``disk_mb`` caps everything it writes), and hands the built folder back as a tar on its
stdout: the arena unpacks it as it unpacks any stranger's archive
(:func:`~tournaments.arena.archives.unpack`), so a build cannot place a file anywhere but
in its own folder. What the build prints goes to its log, which its entrant reads.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from referee.entries import Entry, EntryError, manifest_argv
from referee.sandbox.bot_process import start_bot
from referee.sandbox.bwrap import PATH_INSIDE, SandboxMode
from tournaments.arena.archives import ArchiveError, ArchiveLimits, Contents, unpack

# Copies the submission into the work folder, builds there with the build's output on
# stderr (the log), and writes the folder as a tar on stdout. "$1" is the submission,
# the rest the build's argv: nothing of the entrant's passes through a shell's parsing.
_SCRIPT = (
    'src="$1"; shift; cp -R "$src"/. . && find . -mindepth 1 -exec chmod u+w {} + '
    '&& "$@" 1>&2 && exec tar -cf - .'
)


class BuildError(ValueError):
    """A manifest's ``build`` key that cannot be run."""


@dataclass(frozen=True)
class BuildLimits:
    """What one build may take."""

    seconds: float = 600.0
    """Wall-clock time, from start to the last byte of its output."""
    cpu_seconds: int = 600
    memory_mb: int = 4096
    disk_mb: int = 2048
    """The build's whole tmpfs: the copy of the submission, its work, its output."""
    processes: int = 256
    output_mb: int = 512
    """The built folder, as the tar it hands back."""
    log_mb: int = 4


@dataclass(frozen=True)
class Built:
    """A build's outcome."""

    ok: bool
    reason: str
    """Why it failed; empty if it did not."""
    log: str
    """What the build printed (its stderr), as kept."""
    contents: Contents | None = None
    """The built folder's, if it built."""


def build_path(toolchains: tuple[str, ...]) -> str:
    """The build's PATH: the ``bin`` folder of each toolchain that has one, in the arena
    file's order, then the system's, so that a manifest names ``cargo`` or ``go`` wherever
    the organiser keeps them."""
    bins = [os.path.join(t, "bin") for t in toolchains if os.path.isdir(os.path.join(t, "bin"))]
    return ":".join([*bins, PATH_INSIDE])


def build_command(manifest: Path) -> tuple[str, ...] | None:
    """The manifest's ``build`` argv (a string is split as a shell would, never run by
    one), or None if it names none; BuildError if it is not text or a list of text."""
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BuildError(f"{manifest.name}: cannot be read: {exc}") from None
    value = data.get("build")
    if value is None:
        return None
    try:
        return manifest_argv(value, f"{manifest.name}: key 'build'")
    except EntryError as exc:
        raise BuildError(str(exc)) from None


async def build(
    source: Path,
    command: tuple[str, ...],
    into: Path,
    limits: BuildLimits,
    *,
    toolchains: tuple[str, ...] = (),
) -> Built:
    """Run ``command`` on a copy of ``source`` in the sandbox; unpack what it built into
    ``into`` (which must not exist). ``toolchains``: host folders it may read besides the
    system's (a Rust toolchain, a Go root), their ``bin`` folders on its PATH."""
    entry = Entry(
        name="build",
        command=("sh", "-c", _SCRIPT, "sh", str(source), *command),
        cpu_seconds=limits.cpu_seconds,
        memory_mb=limits.memory_mb,
        file_mb=limits.output_mb,
        disk_mb=limits.disk_mb,
        processes=limits.processes,
        log_mb=max(limits.output_mb, limits.log_mb),
        read_only=(str(source), *toolchains),
        sandbox=SandboxMode.BWRAP,
        file_locks=True,  # go and cargo lock their own files
    )
    with tempfile.TemporaryDirectory(prefix="tavolo-build-") as scratch:
        work = Path(scratch)
        env = {"PATH": build_path(toolchains)}
        process = await start_bot(entry, "build", work / "logs", env, sandbox=SandboxMode.BWRAP)
        try:
            note = await asyncio.wait_for(process.watch(), limits.seconds)
        except TimeoutError:
            await process.stop(grace=0)
            return Built(
                False, f"the build took more than {limits.seconds:g} s", _log(work, limits)
            )
        finally:
            if process.process.returncode is None:  # cancelled: nothing of it outlives us
                await process.stop(grace=0)
        log = _log(work, limits)
        if process.process.returncode != 0:
            return Built(False, f"the build failed: {note.split(';')[0]}", log)
        output = work / "logs" / "stdout.log"
        if output.stat().st_size >= limits.output_mb * 2**20:
            return Built(False, f"the built folder is more than its {limits.output_mb} MB", log)
        cap = limits.output_mb * 2**20
        try:
            contents = unpack(
                output.read_bytes(),
                into,
                ArchiveLimits(archive_bytes=cap, total_bytes=cap, file_bytes=cap, members=100_000),
            )
        except ArchiveError as exc:
            return Built(False, f"the built folder is refused: {exc}", log)
        return Built(True, "", log, contents)


def _log(work: Path, limits: BuildLimits) -> str:
    path = work / "logs" / "stderr.log"
    if not path.exists():
        return ""
    with path.open("rb") as log:
        return log.read(limits.log_mb * 2**20).decode("utf-8", "replace")
