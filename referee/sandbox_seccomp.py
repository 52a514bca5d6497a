"""The seccomp filter of a normal user's sandboxes: ``setsid`` is refused (EPERM).

A referee that is not root makes no cgroups (:mod:`referee.sandbox_cgroups`), so what
keeps one sandbox's busy processes from taking the CPU from the other bots is the
kernel's autogroup, which schedules each session as one group: bwrap starts every
sandbox in a session of its own, and with ``setsid`` refused no process of the bot can
leave it. The filter is a classic BPF program for bwrap's ``--seccomp FD``; it knows the
system-call numbers of x86-64 (with its i386 and x32 ABIs) and AArch64 (with 32-bit Arm),
and allows everything on other architectures.
"""

from __future__ import annotations

import struct

SETSID = {
    0xC000003E: (112, 0x40000000 + 112),  # AUDIT_ARCH_X86_64, and the x32 ABI's number
    0x40000003: (66,),  # AUDIT_ARCH_I386 (int 0x80 on x86-64)
    0xC00000B7: (157,),  # AUDIT_ARCH_AARCH64
    0x40000028: (66,),  # AUDIT_ARCH_ARM (32-bit Arm on AArch64)
}
"""``setsid``'s number under each architecture a filter may be asked about."""

_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM


def _instruction(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def setsid_filter() -> bytes:
    """The program: for each known architecture, ``setsid`` gets EPERM; all else runs."""
    # Laid out as: load the arch; per arch, test it, load the number, test each number;
    # then ALLOW, then DENY. Jumps are relative to the next instruction.
    body: list[tuple[int, int, int | str, int | str]] = [(_LD_ABS_W, _ARCH, 0, 0)]
    for arch, numbers in SETSID.items():
        block = 1 + len(numbers)  # the load and the tests that follow the arch test
        body.append((_JEQ_K, arch, 0, block))
        body.append((_LD_ABS_W, _NR, 0, 0))
        for n in numbers:
            body.append((_JEQ_K, n, "deny", 0))
        # A known arch whose number is not setsid: on to ALLOW, past the other blocks.
        body[-1] = (*body[-1][:3], "allow")
    allow, deny = len(body), len(body) + 1
    program = b""
    for at, (code, k, jt, jf) in enumerate(body):
        targets = {"allow": allow, "deny": deny}
        true = targets[jt] - at - 1 if isinstance(jt, str) else jt
        false = targets[jf] - at - 1 if isinstance(jf, str) else jf
        program += _instruction(code, k, true, false)
    return program + _instruction(_RET_K, _ALLOW) + _instruction(_RET_K, _EPERM)
