"""The seccomp filter of every sandbox: what no bot may ask of the kernel.

Every refused call either reaches a kernel object that other sandboxes can reach too
(a lock, a key, a futex or the page cache of a file they all read, a watch on one), or
is a kernel facility a bot needs no more than a Docker container does (Docker's default
profile is the floor), or lets a process leave its sandbox's session, namespaces or
mounts. docs/security.md says, call by call, why each is refused.

The filter is a classic BPF program for bwrap's ``--seccomp FD``. It knows the call
numbers of x86-64 and AArch64. Every other ABI is refused whole: i386 and x32 on x86-64,
32-bit Arm on AArch64, and any architecture it does not know, where nothing runs at all
(so a sandbox there fails at once rather than running unfiltered).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

X86_64, AARCH64 = 0xC000003E, 0xC00000B7  # AUDIT_ARCH_*
X32_BIT = 0x40000000  # x32 calls are x86-64 calls with this bit set

EPERM, ENOSYS = 1, 38

F_LOCK_COMMANDS = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)
"""fcntl's F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW,
F_SETLEASE, F_GETLEASE and F_NOTIFY: a lock, lease or watch is seen across sandboxes."""
F_LOCKS = (5, 6, 7, 36, 37, 38)
"""Of those, the locks (POSIX and OFD): what a build's filter allows."""

MADV_EVICTS = (20, 21)
"""madvise's MADV_COLD and MADV_PAGEOUT: they push a shared file's pages out of the cache."""

FADV_DONTNEED = 4
"""posix_fadvise's POSIX_FADV_DONTNEED: it drops a file's pages from the shared cache."""

CLONE_NAMESPACES = 0x7E020000
"""CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET."""

FUTEX_PRIVATE_FLAG = 128
FUTEX_COMMAND = 127
FUTEX_WAKES = (1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13)
"""futex's commands that wake, requeue or lock: FUTEX_WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP,
LOCK_PI, UNLOCK_PI, TRYLOCK_PI, WAKE_BITSET, WAIT_REQUEUE_PI, CMP_REQUEUE_PI, LOCK_PI2.
Shared waits stay: ``pthread_join`` waits, without the private flag, for the kernel's wake
at the thread's exit, and a wait that nobody else can end carries nothing."""

REFUSED: dict[str, tuple[int, int]] = {
    # name: (x86-64, AArch64). Kernel objects another sandbox can reach:
    "flock": (73, 32),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "keyctl": (250, 219),
    "inotify_init": (253, -1),
    "inotify_init1": (294, 26),
    "inotify_add_watch": (254, 27),
    "fanotify_init": (300, 262),
    "fanotify_mark": (301, 263),
    "mincore": (27, 232),
    "cachestat": (451, 451),
    "futex_waitv": (449, 449),
    "futex_wake": (454, 454),
    "futex_wait": (455, 455),
    "futex_requeue": (456, 456),
    # Leaving the sandbox's session, namespaces or mounts:
    "setsid": (112, 157),
    "unshare": (272, 97),
    "setns": (308, 268),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    # Other processes:
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "kcmp": (312, 272),
    "pidfd_getfd": (438, 438),
    "process_madvise": (440, 440),
    "process_mrelease": (448, 448),
    # Kernel facilities (Docker's default profile refuses these too):
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "reboot": (169, 142),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "acct": (163, 89),
    "quotactl": (179, 60),
    "quotactl_fd": (443, 443),
    "syslog": (103, 116),
    "sysfs": (139, -1),
    "ustat": (136, -1),
    "uselib": (134, -1),
    "lookup_dcookie": (212, 18),
    "vhangup": (153, 58),
    "iopl": (172, -1),
    "ioperm": (173, -1),
    "name_to_handle_at": (303, 264),
    "open_by_handle_at": (304, 265),
    "settimeofday": (164, 170),
    "clock_settime": (227, 112),
    "clock_adjtime": (305, 266),
    "get_mempolicy": (239, 236),
    "set_mempolicy": (238, 237),
    "mbind": (237, 235),
    "move_pages": (279, 239),
    "set_mempolicy_home_node": (450, 450),
    "nfsservctl": (180, 42),
    "create_module": (174, -1),
    "get_kernel_syms": (177, -1),
    "query_module": (178, -1),
    "_sysctl": (156, -1),
}
"""Calls refused with EPERM whatever their arguments; -1 where an ABI has no such call."""

UNKNOWN: dict[str, tuple[int, int]] = {"clone3": (435, 435)}
"""Calls answered ENOSYS, as a kernel without them would: clone3's flags are in memory the
filter cannot read, and libraries fall back to ``clone`` on ENOSYS (and only on it)."""

ARGUMENTS: dict[str, tuple[tuple[int, int], int, str, tuple[int, ...]]] = {
    # name: ((x86-64, AArch64), argument, test, values): refused when the test holds.
    "fcntl": ((72, 25), 1, "in", F_LOCK_COMMANDS),
    "madvise": ((28, 233), 2, "in", MADV_EVICTS),
    "fadvise64": ((221, 223), 3, "in", (FADV_DONTNEED,)),
    "clone": ((56, 220), 0, "any", (CLONE_NAMESPACES,)),
    # A futex without the private flag is keyed by the file page it is in, so two sandboxes
    # mapping one file (/etc/passwd, libc) could wait and wake each other.
    "futex": ((202, 98), 1, "shared", FUTEX_WAKES),
}
"""Calls refused with EPERM for some values of one argument (its low 32 bits): ``in``, one
of the values; ``any``, any bit of the mask set; ``shared``, a futex command of the values
without the private flag."""

ARCHES = {X86_64: 0, AARCH64: 1}
"""The architectures the filter knows, and their column in the tables above."""

_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_NR, _ARCH, _ARGS = 0, 4, 16  # offsets in struct seccomp_data; both arches are little-endian
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO


@dataclass
class _Jump:
    code: int
    k: int
    true: str | int = 0  # a label, or a relative offset
    false: str | int = 0


def _assemble(lines: list[_Jump | str]) -> bytes:
    """Instructions and labels (strings) into a program; jumps name labels."""
    at: dict[str, int] = {}
    count = 0
    for line in lines:
        if isinstance(line, str):
            at[line] = count
        else:
            count += 1
    program, index = b"", 0
    for line in lines:
        if isinstance(line, str):
            continue

        def offset(target: str | int, index: int = index) -> int:
            return target if isinstance(target, int) else at[target] - index - 1

        jt, jf = offset(line.true), offset(line.false)
        if not (0 <= jt < 256 and 0 <= jf < 256):
            raise ValueError(f"instruction {index}: a jump of {jt} or {jf} does not fit")
        program += struct.pack("=HBBI", line.code, jt, jf, line.k)
        index += 1
    return program


def _arch_block(column: int, label: str, *, locks: bool) -> list[_Jump | str]:
    """One architecture's tests, ending in its own returns (a jump reaches 255 ahead)."""
    allow, deny, enosys = f"{label}-allow", f"{label}-deny", f"{label}-enosys"
    lines: list[_Jump | str] = [label, _Jump(_LD_ABS_W, _NR)]
    if column == ARCHES[X86_64]:
        lines.append(_Jump(_JGE_K, X32_BIT, deny, 0))
    for name, numbers in REFUSED.items():
        if numbers[column] >= 0 and not (locks and name == "flock"):
            lines.append(_Jump(_JEQ_K, numbers[column], deny, 0))
    for numbers in UNKNOWN.values():
        lines.append(_Jump(_JEQ_K, numbers[column], enosys, 0))
    tests: list[_Jump | str] = []
    for name, (numbers, argument, test, values) in ARGUMENTS.items():
        if locks and name == "fcntl":
            values = tuple(v for v in values if v not in F_LOCKS)
        here = f"{label}-{name}"
        lines.append(_Jump(_JEQ_K, numbers[column], here, 0))
        tests += [here, _Jump(_LD_ABS_W, _ARGS + 8 * argument)]
        if test == "in":
            tests += [_Jump(_JEQ_K, value, deny, 0) for value in values]
            tests.append(_Jump(_JEQ_K, 0, allow, allow))
        elif test == "any":
            tests.append(_Jump(_JSET_K, values[0], deny, allow))
        else:
            tests += [_Jump(_JSET_K, FUTEX_PRIVATE_FLAG, allow, 0), _Jump(_AND_K, FUTEX_COMMAND)]
            tests += [_Jump(_JEQ_K, value, deny, 0) for value in values]
            tests.append(_Jump(_JEQ_K, 0, allow, allow))
    return [
        *lines,
        _Jump(_JEQ_K, 0, allow, allow),
        *tests,
        allow, _Jump(_RET_K, _ALLOW),
        deny, _Jump(_RET_K, _ERRNO | EPERM),
        enosys, _Jump(_RET_K, _ERRNO | ENOSYS),
    ]  # fmt: skip


def seccomp_program(*, locks: bool = False) -> bytes:
    """The program: the tables above under x86-64 and AArch64; EPERM to all else.

    ``locks``: file locks are allowed (``flock`` and :data:`F_LOCKS`), for an arena's build,
    whose tools (go, cargo) lock their own files. No bot's sandbox may lock or see a lock,
    so a build's locks reach no one; leases and ``F_NOTIFY``, which see others' opens,
    stay refused."""
    lines: list[_Jump | str] = [_Jump(_LD_ABS_W, _ARCH)]
    for arch in ARCHES:
        lines.append(_Jump(_JEQ_K, arch, f"arch-{arch:x}", 0))
    lines += [_Jump(_RET_K, _ERRNO | EPERM)]  # an ABI the filter does not know
    for arch, column in ARCHES.items():
        lines += _arch_block(column, f"arch-{arch:x}", locks=locks)
    return _assemble(lines)
