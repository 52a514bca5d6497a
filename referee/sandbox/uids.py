"""Host uids for a root referee's sandboxes: one unprivileged uid of a dedicated range each.

Started by root, bwrap would map the bot's uid to host uid 0: a bot without capabilities,
but still the owner of every root-owned file the sandbox shows, ``/proc/sys`` among them.
So a root referee maps each sandbox's user to a host uid of its own from
:data:`UID_RANGE`, which no account and no file on the host has. Two sandboxes never share
a uid while both run, whichever referee of the machine started them: a uid is leased by an
exclusive ``flock`` on a file of :data:`LEASES`, which the kernel releases when the
referee that held it dies, however it dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass

UID_RANGE = range(0x6F000000, 0x6F000000 + 65536)
"""The host uids (and gids) sandboxes run as: 1862270976 to 1862336511, inside systemd's
range for containers' users, where no normal account lives."""
LEASES = "/run/tavolo-sandbox-uids"
"""Where each leased uid has its lock file (root's, mode 0700)."""


class UidsExhausted(RuntimeError):
    """Every uid of :data:`UID_RANGE` is leased: as many sandboxes run on this machine."""


@dataclass
class UidLease:
    """One host uid, leased to one sandbox until :meth:`release`."""

    uid: int
    _fd: int

    def release(self) -> None:
        """Give the uid back (once; later calls do nothing)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def lease_uid() -> UidLease:
    """A uid of :data:`UID_RANGE` that no running sandbox of this machine has."""
    os.makedirs(LEASES, mode=0o700, exist_ok=True)
    start = secrets.randbelow(len(UID_RANGE))
    for step in range(len(UID_RANGE)):
        uid = UID_RANGE[(start + step) % len(UID_RANGE)]
        fd = os.open(f"{LEASES}/{uid}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        return UidLease(uid, fd)
    raise UidsExhausted(f"all {len(UID_RANGE)} sandbox uids are in use ({LEASES})")


def map_user_namespace(child: int, uid: int) -> None:
    """Map sandbox process ``child``'s new user namespace: its root stays host root (bwrap's
    own set-up needs it, and :data:`referee.sandbox.bwrap.DROP_ROOT` leaves it before the bot
    runs); ``nobody`` (65534) is host ``uid``, which the bot runs as."""
    line = f"0 0 1\n65534 {uid} 1\n"
    for name in ("uid_map", "gid_map"):
        # A sandbox gone already is no error here: bwrap's stderr in its log says why.
        with (
            contextlib.suppress(FileNotFoundError, ProcessLookupError),
            open(f"/proc/{child}/{name}", "w", encoding="ascii") as file,
        ):
            file.write(line)


def forbid_user_namespaces(child: int) -> None:
    """Set the user namespace of sandbox process ``child`` to allow no user namespace below
    it, as bwrap's ``--disable-userns`` would (which does not go with a namespace mapped
    from outside). Only its root may change that, and the bot runs as its ``nobody``."""
    nsenter = shutil.which("nsenter")
    if nsenter is None:
        raise OSError("nsenter (util-linux) is not installed: install util-linux")
    done = subprocess.run(
        [nsenter, "--user", "--target", str(child), "--", "/bin/sh", "-c",
         "echo 0 > /proc/sys/user/max_user_namespaces"],
        capture_output=True, text=True, timeout=10, check=False,
    )  # fmt: skip
    if done.returncode != 0 and os.path.exists(f"/proc/{child}"):
        said = " ".join(done.stderr.split()) or f"exit status {done.returncode}"
        raise OSError(f"cannot forbid user namespaces in the sandbox: {said}")
