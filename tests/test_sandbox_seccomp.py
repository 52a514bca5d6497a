"""The setsid filter of a normal user's sandboxes, run instruction by instruction.

The program is classic BPF; the kernel runs it on x86-64 in tests/test_sandbox.py
(``test_a_normal_users_sandbox_cannot_leave_its_session``). Here a small interpreter of
the three instructions it uses runs it for every architecture it knows, which this
machine cannot run, and for architectures it does not know.
"""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from referee.sandbox_seccomp import SETSID, setsid_filter

ALLOW = 0x7FFF0000
EPERM = 0x00050001


def run(program: bytes, arch: int, nr: int) -> int:
    """What the filter returns for system call ``nr`` under ``arch``."""
    code = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    data = {0: nr, 4: arch}  # struct seccomp_data: nr at 0, arch at 4
    accumulator, at = 0, 0
    while True:
        op, jt, jf, k = code[at]
        if op == 0x20:  # load a word of seccomp_data
            accumulator, at = data[k], at + 1
        elif op == 0x15:  # jump if equal
            at += 1 + (jt if accumulator == k else jf)
        elif op == 0x06:  # return
            return k
        else:
            raise AssertionError(f"instruction {at}: unexpected opcode {op:#x}")


def test_setsid_is_refused_under_each_architecture_and_its_neighbours_run() -> None:
    program = setsid_filter()
    assert run(program, 0xC000003E, 112) == EPERM  # x86-64
    assert run(program, 0xC000003E, 0x40000070) == EPERM  # x32
    assert run(program, 0x40000003, 66) == EPERM  # i386 on x86-64
    assert run(program, 0xC00000B7, 157) == EPERM  # AArch64
    assert run(program, 0x40000028, 66) == EPERM  # 32-bit Arm
    # x86-64's 66 is semget and 111 getpgrp; AArch64's 112 is clock_settime.
    assert run(program, 0xC000003E, 66) == ALLOW
    assert run(program, 0xC000003E, 111) == ALLOW
    assert run(program, 0xC00000B7, 112) == ALLOW
    assert run(program, 0x40000003, 112) == ALLOW


NUMBERS = sorted({n for numbers in SETSID.values() for n in numbers})


@given(
    arch=st.sampled_from([*SETSID, 0xC00000F3, 0]),  # and RISC-V's, unknown to the filter
    nr=st.one_of(st.sampled_from(NUMBERS), st.integers(0, 2**32 - 1)),
)
def test_only_setsid_is_refused(arch: int, nr: int) -> None:
    expected = EPERM if nr in SETSID.get(arch, ()) else ALLOW
    assert run(setsid_filter(), arch, nr) == expected
