"""The sandboxes' seccomp filter, run instruction by instruction.

The kernel runs the program on x86-64 in tests/test_sandbox_kernel_objects.py and
tests/test_sandbox.py. Here a small interpreter of the instructions it uses runs it for
every architecture and ABI, which this machine cannot all run, against a model made from
the tables of :mod:`referee.sandbox.seccomp`.
"""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from referee.sandbox.seccomp import (
    AARCH64,
    ARCHES,
    ARGUMENTS,
    F_LOCKS,
    REFUSED,
    UNKNOWN,
    X32_BIT,
    X86_64,
    seccomp_program,
)

ALLOW = 0x7FFF0000
EPERM = 0x00050001
ENOSYS = 0x00050026
I386, ARM, RISCV64 = 0x40000003, 0x40000028, 0xC00000F3
PROGRAM = seccomp_program()
BUILD_PROGRAM = seccomp_program(locks=True)
"""An arena's build's: file locks allowed."""


def run(arch: int, nr: int, *args: int, program: bytes = PROGRAM) -> int:
    """What the filter returns for system call ``nr`` under ``arch`` with ``args``."""
    code = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    data = struct.pack("=II8x6Q", nr, arch, *(list(args) + [0] * (6 - len(args))))
    accumulator, at = 0, 0
    while True:
        op, jt, jf, k = code[at]
        if op == 0x20:  # load a word of seccomp_data
            accumulator, at = struct.unpack_from("=I", data, k)[0], at + 1
        elif op == 0x54:  # accumulator &= k
            accumulator, at = accumulator & k, at + 1
        elif op in (0x15, 0x35, 0x45):  # jump if equal, if greater or equal, if bits set
            holds = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}
            at += 1 + (jt if holds[op] else jf)
        elif op == 0x06:  # return
            return k
        else:
            raise AssertionError(f"instruction {at}: unexpected opcode {op:#x}")


def test_hand_worked_calls_under_x86_64() -> None:
    assert run(X86_64, 0, 3, 0, 10) == ALLOW  # read
    assert run(X86_64, 112) == EPERM  # setsid
    assert run(X86_64, 73, 3, 1) == EPERM  # flock(fd, LOCK_SH)
    assert run(X86_64, 72, 3, 6) == EPERM  # fcntl(fd, F_SETLK)
    assert run(X86_64, 72, 3, 36) == EPERM  # fcntl(fd, F_OFD_GETLK)
    assert run(X86_64, 72, 3, 1024) == EPERM  # fcntl(fd, F_SETLEASE)
    assert run(X86_64, 72, 3, 3) == ALLOW  # fcntl(fd, F_GETFL)
    assert run(X86_64, 72, 3, 1030) == ALLOW  # fcntl(fd, F_DUPFD_CLOEXEC)
    assert run(X86_64, 248) == EPERM  # add_key
    assert run(X86_64, 250) == EPERM  # keyctl
    assert run(X86_64, 294) == EPERM  # inotify_init1
    assert run(X86_64, 27) == EPERM  # mincore
    assert run(X86_64, 28, 0, 4096, 4) == ALLOW  # madvise(MADV_DONTNEED): the Go runtime's
    assert run(X86_64, 28, 0, 4096, 21) == EPERM  # madvise(MADV_PAGEOUT)
    assert run(X86_64, 221, 3, 0, 0, 4) == EPERM  # fadvise64(POSIX_FADV_DONTNEED)
    assert run(X86_64, 221, 3, 0, 0, 2) == ALLOW  # fadvise64(POSIX_FADV_SEQUENTIAL)
    assert run(X86_64, 202, 0, 128) == ALLOW  # futex(FUTEX_WAIT_PRIVATE)
    assert run(X86_64, 202, 0, 129) == ALLOW  # futex(FUTEX_WAKE_PRIVATE)
    assert run(X86_64, 202, 0, 1) == EPERM  # futex(FUTEX_WAKE), keyed by a shared page
    assert run(X86_64, 202, 0, 10) == EPERM  # futex(FUTEX_WAKE_BITSET)
    assert run(X86_64, 202, 0, 5) == EPERM  # futex(FUTEX_WAKE_OP)
    assert run(X86_64, 202, 0, 4 | 256) == EPERM  # FUTEX_CMP_REQUEUE | FUTEX_CLOCK_REALTIME
    # A shared wait only the kernel ends: pthread_join's (FUTEX_WAIT_BITSET|CLOCK_REALTIME).
    assert run(X86_64, 202, 0, 9 | 256) == ALLOW
    assert run(X86_64, 202, 0, 0) == ALLOW  # futex(FUTEX_WAIT)
    assert run(X86_64, 56, 0x3D0F00) == ALLOW  # clone for a thread (glibc's flags)
    assert run(X86_64, 56, 0x01200011) == ALLOW  # clone for fork
    assert run(X86_64, 56, 0x10000011) == EPERM  # clone(CLONE_NEWUSER)
    assert run(X86_64, 56, 0x40000011) == EPERM  # clone(CLONE_NEWNET)
    assert run(X86_64, 435) == ENOSYS  # clone3: glibc falls back to clone
    assert run(X86_64, 272) == EPERM  # unshare
    assert run(X86_64, 425) == EPERM  # io_uring_setup
    assert run(X86_64, X32_BIT + 0) == EPERM  # x32's read
    assert run(X86_64, 0x1_0000_0000 - 1) == EPERM


def test_hand_worked_calls_under_aarch64_and_other_abis() -> None:
    assert run(AARCH64, 63, 3, 0, 10) == ALLOW  # read
    assert run(AARCH64, 157) == EPERM  # setsid
    assert run(AARCH64, 112) == EPERM  # clock_settime (x86-64's setsid is 112)
    assert run(AARCH64, 32) == EPERM  # flock
    assert run(AARCH64, 25, 3, 7) == EPERM  # fcntl(fd, F_SETLKW)
    assert run(AARCH64, 25, 3, 1) == ALLOW  # fcntl(fd, F_GETFD)
    assert run(AARCH64, 98, 0, 1) == EPERM  # futex(FUTEX_WAKE)
    assert run(AARCH64, 98, 0, 129) == ALLOW  # futex(FUTEX_WAKE_PRIVATE)
    assert run(AARCH64, 219) == EPERM  # keyctl
    assert run(AARCH64, 73) == ALLOW  # ppoll (x86-64's flock is 73)
    assert run(AARCH64, 435) == ENOSYS
    for arch in (I386, ARM, RISCV64, 0):
        assert run(arch, 3) == EPERM  # i386's read, anything under an ABI it does not know


def test_a_builds_filter_allows_file_locks_and_nothing_more() -> None:
    for arch, flock, fcntl in ((X86_64, 73, 72), (AARCH64, 32, 25)):
        assert run(arch, flock, 3, 2, program=BUILD_PROGRAM) == ALLOW  # flock(fd, LOCK_EX)
        for command in F_LOCKS:  # F_GETLK, F_SETLK, F_SETLKW and their OFD forms
            assert run(arch, fcntl, 3, command, program=BUILD_PROGRAM) == ALLOW
        for command in (1024, 1025, 1026):  # F_SETLEASE, F_GETLEASE, F_NOTIFY: others' opens
            assert run(arch, fcntl, 3, command, program=BUILD_PROGRAM) == EPERM
    assert run(X86_64, 112, program=BUILD_PROGRAM) == EPERM  # setsid
    assert run(X86_64, 202, 0, 1, program=BUILD_PROGRAM) == EPERM  # futex(FUTEX_WAKE)
    assert run(X86_64, 435, program=BUILD_PROGRAM) == ENOSYS  # clone3


def model(arch: int, nr: int, args: list[int], *, locks: bool = False) -> int:
    """What the tables say, written independently of the program's layout; ``locks``: a
    build's, where file locks are allowed."""
    if arch not in ARCHES or (arch == X86_64 and nr >= X32_BIT):
        return EPERM
    column = ARCHES[arch]
    if nr in {n[column] for name, n in REFUSED.items() if not (locks and name == "flock")}:
        return EPERM
    if nr in {numbers[column] for numbers in UNKNOWN.values()}:
        return ENOSYS
    for name, (numbers, argument, test, values) in ARGUMENTS.items():
        if nr == numbers[column]:
            if locks and name == "fcntl":
                values = tuple(v for v in values if v not in F_LOCKS)
            low = args[argument] & 0xFFFFFFFF
            refused = {
                "in": low in values,
                "any": bool(low & values[0]),
                "shared": not (low & 128) and (low & 127) in values,
            }[test]
            return EPERM if refused else ALLOW
    return ALLOW


NUMBERS = sorted(
    {n for numbers in REFUSED.values() for n in numbers if n >= 0}
    | {n for numbers, *_ in ARGUMENTS.values() for n in numbers}
    | {n for numbers in UNKNOWN.values() for n in numbers}
)
VALUES = sorted(
    {v for *_, values in ARGUMENTS.values() for v in values}
    | {v | flags for v in range(14) for flags in (0, 128, 256, 384)}
)


@given(
    arch=st.sampled_from([X86_64, AARCH64, I386, ARM, RISCV64]),
    nr=st.one_of(st.sampled_from(NUMBERS), st.integers(0, 2**32 - 1)),
    args=st.lists(
        st.one_of(st.sampled_from(VALUES), st.integers(0, 2**64 - 1)), min_size=6, max_size=6
    ),
)
def test_the_program_does_what_its_tables_say(arch: int, nr: int, args: list[int]) -> None:
    assert run(arch, nr, *args) == model(arch, nr, args)
    assert run(arch, nr, *args, program=BUILD_PROGRAM) == model(arch, nr, args, locks=True)
