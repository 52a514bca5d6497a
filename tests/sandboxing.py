"""Whether the tests can make bubblewrap sandboxes, and what to do when they cannot.

With ``TAVOLO_REQUIRE_SANDBOX=1`` (CI) a machine without a working sandbox fails every
test that needs one; elsewhere those tests are skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from referee.sandbox.probe import sandbox_problem

REQUIRED = os.environ.get("TAVOLO_REQUIRE_SANDBOX") == "1"


def require_sandbox() -> str:
    """``"bwrap"`` if sandboxes can be made here; else skip, or fail under CI."""
    problem = sandbox_problem()
    if problem is None:
        return "bwrap"
    if REQUIRED:
        pytest.fail(f"{problem} (TAVOLO_REQUIRE_SANDBOX=1: no sandbox test may be skipped)")
    pytest.skip(problem)


@contextlib.contextmanager
def as_a_normal_user(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The referee on a normal user's road (no cgroups, setsid refused in its sandboxes):
    under root, ``os.geteuid`` answers 1000, the kernel's answer and not our component.
    ``sandbox_problem`` is asked again on the way in and out."""
    if os.geteuid() == 0:
        monkeypatch.setattr(os, "geteuid", lambda: 1000)
    sandbox_problem.cache_clear()
    try:
        yield
    finally:
        monkeypatch.undo()
        sandbox_problem.cache_clear()
