"""What each entry's bot processes run under (``bwrap``, ``off``, ``remote``), and the
warnings about what a match cannot confine."""

from __future__ import annotations

from referee.entries import Entry
from referee.sandbox.bwrap import SandboxError, SandboxMode, running_as_root
from referee.sandbox.probe import sandbox_problem


def confinement_of(entry: Entry, requested: SandboxMode, *, allow_unconfined: bool) -> str:
    """What ``entry``'s processes run under: ``bwrap``, ``off`` or ``remote``.

    SandboxError (one line, with how to install bubblewrap) when a ``cmd:`` or manifest
    bot needs a sandbox that cannot be made here and ``allow_unconfined`` is not set.
    """
    if entry.remote:
        return "remote"
    if SandboxMode.OFF in (requested, entry.sandbox):
        return SandboxMode.OFF.value
    problem = sandbox_problem()
    if problem is None:
        return SandboxMode.BWRAP.value
    if entry.built_in or allow_unconfined:
        return SandboxMode.OFF.value
    raise SandboxError(
        f"entry {entry.name!r} must run in a sandbox: {problem}; "
        'or set sandbox = "off" to run bots unconfined'
    )


def confinement_warnings(
    modes: dict[str, str],
    requested: SandboxMode,
    *,
    duplicate: bool,
    unconfined: str = "",
    built_in: frozenset[str] = frozenset(),
) -> list[str]:
    """One line for each remote entry of duplicate play, one for the entries that run
    unconfined though ``requested`` is a sandbox, and one if sandboxed entries not
    ``built_in`` get no cgroups (a referee that is not root); ``modes`` is name -> what it
    runs under. ``unconfined`` words those entries (``built-in``, say)."""
    out = []
    loose = []
    if not running_as_root() and any(
        mode == SandboxMode.BWRAP and name not in built_in for name, mode in modes.items()
    ):
        out.append(
            "the referee is not root, so its sandboxes have no cgroups: their memory is "
            "capped per process, not per sandbox, and their CPU share rests on the kernel's "
            "autogroup (docs/security.md, 'What stays outside')"
        )
    for name, mode in modes.items():
        if mode == "remote" and duplicate:
            out.append(
                f"entry {name!r} is remote: it cannot be confined, and may remember the "
                "deals of a duplicate set from one game to the next"
            )
        elif mode == SandboxMode.OFF and requested is not SandboxMode.OFF:
            loose.append(repr(name))
    if loose:
        why = sandbox_problem() or 'its manifest asks for sandbox = "off"'
        verb = "runs" if len(loose) == 1 else "run"
        words = f"{unconfined} " if unconfined else ""
        out.append(f"{words}{', '.join(loose)} {verb} unconfined: {why}")
    return out
