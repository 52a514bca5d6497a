"""Whether a bubblewrap sandbox can be made here: one real sandbox, made as a bot's is.

Asked once per process, before bots are started confined; the answer says in one line what
is missing and what to do (docs/security.md).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess

from referee.sandbox.bwrap import Confinement, bwrap_argv, missing_tools, running_as_root
from referee.sandbox.cgroups import cgroups_problem
from referee.sandbox.uids import forbid_user_namespaces, lease_uid, map_user_namespace


@functools.cache
def sandbox_problem() -> str | None:
    """Why no bubblewrap sandbox can be made here (one line, with what to do), or None.

    Checked once per process, by making one real sandbox the way bots get theirs.
    """
    if missing := missing_tools():
        return missing
    probe = Confinement(disk_mb=1, processes=8, cpu_seconds=5, memory_mb=256, file_mb=1)
    command = ["/bin/sh", "-c", "echo ok > /tmp/probe && cat /tmp/probe"]
    if running_as_root() and (problem := cgroups_problem()):
        return problem
    try:
        done = _probe(probe, command)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot start: {exc}"
    if done.returncode == 0 and done.stdout.strip() == "ok":
        return None
    said = " ".join((done.stderr or done.stdout).split()) or f"exit status {done.returncode}"
    hint = ""
    if "--size" in said or "Unknown option" in said:
        hint = "; bubblewrap 0.8 or newer is needed (bwrap --version)"
    elif "namespace" in said.lower() or "permission" in said.lower():
        hint = (
            "; user namespaces may be off: sysctl user.max_user_namespaces=10000 "
            "(and kernel.unprivileged_userns_clone=1 where it exists); in Docker see "
            "docs/security.md"
        )
    return f"bubblewrap cannot make a sandbox here: {said}{hint}"


def _probe(probe: Confinement, command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in a sandbox made as a bot's is: as root, on a host uid of its own."""
    if not running_as_root():
        argv = bwrap_argv(probe, command, {}, (), None)
        return subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    lease = lease_uid()
    info_r, info_w = os.pipe()
    users_r, users_w = os.pipe()
    try:
        argv = bwrap_argv(probe, command, {}, (), None, userns_block_fd=users_r, info_fd=info_w)
        with subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            pass_fds=(users_r, info_w),
        ) as process:  # fmt: skip
            os.close(info_w)
            info_w = -1
            data = b""
            while not data.rstrip().endswith(b"}") and (chunk := os.read(info_r, 4096)):
                data += chunk
            if data:
                child = int(json.loads(data)["child-pid"])
                map_user_namespace(child, lease.uid)
                forbid_user_namespaces(child)
                with contextlib.suppress(BrokenPipeError):
                    os.write(users_w, b"1")
            out, err = process.communicate(timeout=20)
            return subprocess.CompletedProcess(argv, process.returncode, out, err)
    finally:
        for fd in (info_r, info_w, users_r, users_w):
            if fd >= 0:
                os.close(fd)
        lease.release()
