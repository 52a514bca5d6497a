"""Bot processes and their confinement; docs/security.md says what each layer stops.

- :mod:`~referee.sandbox.bot_process`: starting a bot process, confined or not, its logs,
  its end;
- :mod:`~referee.sandbox.bwrap`: the bubblewrap sandbox's command line (namespaces, mounts,
  rlimits);
- :mod:`~referee.sandbox.probe`: whether a sandbox can be made here;
- :mod:`~referee.sandbox.cgroups`: a root referee's cgroups per sandbox;
- :mod:`~referee.sandbox.seccomp`: the system calls no sandboxed bot may make;
- :mod:`~referee.sandbox.uids`: a root referee's host uid per sandbox;
- :mod:`~referee.sandbox.proc_views`: the fixed ``/proc`` counters a sandbox sees;
- :mod:`~referee.sandbox.rlimits`: an unconfined bot's rlimits, run as
  ``python -m referee.sandbox.rlimits``.

This file imports nothing: the rlimits program runs it on every unconfined bot's start.
"""
