"""A Python function or bot played as a bot process, named by its module and its name in it.

    TAVOLO_REFEREE=... TAVOLO_TICKET=... python -m tavolo_bot.py_entry mybots.greedy:choose

``MODULE:NAME`` names a function of the :class:`~tavolo_bot.Turn` (a bot's ``choose``), a
:class:`~tavolo_bot.Bot` subclass or instance, or a function that makes a bot
(:func:`tavolo_bot.bot.bot_factory`); ``--path DIR`` (repeatable) imports the module from
``DIR``, put first on ``sys.path``. It is then played as :func:`tavolo_bot.run` plays a bot,
with the same exit codes. This is how the referee runs a ``py:MODULE:NAME`` entry, in its
sandbox (docs/writing-a-bot.md).

A target that cannot be played is one line on stderr and exit code 2; a module whose own
code raises as it is imported shows the traceback, exit code 1.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import NoReturn

from tavolo_bot.bot import Bot, bot_factory
from tavolo_bot.runner import EXIT_FAILED, EXIT_USAGE, run

USAGE = "usage: python -m tavolo_bot.py_entry [--path DIR]... MODULE:NAME"


class TargetError(ValueError):
    """A ``MODULE:NAME`` that is malformed, cannot be found, or names no bot."""


def parse_target(text: str) -> tuple[str, str]:
    """(module, name) of ``MODULE:NAME``: a dotted module path, a colon, and a name."""
    module, colon, name = text.partition(":")
    if not colon or not all(p.isidentifier() for p in module.split(".")) or not name.isidentifier():
        raise TargetError(
            f"{text!r} is not MODULE:NAME (a dotted module path, a colon and a name in it, "
            "such as mybots.greedy:choose)"
        )
    return module, name


def load(module: str, name: str, paths: Sequence[str] = ()) -> Callable[[], Bot]:
    """What ``name`` of ``module`` plays as (:func:`~tavolo_bot.bot.bot_factory`), the module
    imported with ``paths`` first on ``sys.path``, and from one of them when given.

    TargetError when the module is not found, comes from elsewhere (a module of that name
    imported already), lacks ``name`` or ``name`` is no bot; anything the module's own code
    raises as it is imported is raised as it is.
    """
    for path in reversed(paths):
        if path not in sys.path:
            sys.path.insert(0, path)
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module == exc.name or module.startswith(exc.name + ".")):
            raise  # a module the bot's own code imports is missing: its traceback says where
        raise TargetError(f"no module named {exc.name!r}") from None
    file = getattr(loaded, "__file__", None)
    if paths and not _inside(file, paths):
        raise TargetError(
            f"module {module} is {file or 'built in'}, not one of {', '.join(paths)}: "
            "another module of that name was imported first"
        )
    if not hasattr(loaded, name):
        raise TargetError(f"module {module} ({file}) has no {name!r}")
    try:
        return bot_factory(getattr(loaded, name))
    except TypeError as exc:
        raise TargetError(f"{module}:{name}: {exc}") from None


def _inside(file: str | None, folders: Sequence[str]) -> bool:
    if file is None:
        return False
    real = os.path.realpath(file)
    return any(real.startswith(os.path.realpath(f).rstrip("/") + "/") for f in folders)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Play the target the arguments name with the settings of the environment."""
    args = list(sys.argv[1:] if argv is None else argv)
    paths: list[str] = []
    while len(args) > 1 and args[0] == "--path":
        paths.append(args[1])
        del args[:2]
    try:
        if len(args) != 1 or args[0].startswith("-"):
            raise TargetError(USAGE)
        make = load(*parse_target(args[0]), paths)
    except TargetError as exc:
        _say(str(exc))
        raise SystemExit(EXIT_USAGE) from None
    except Exception:  # the module's own code failed as it was imported: show where
        _say(f"importing {args[0]} raised an exception:")
        traceback.print_exc()
        raise SystemExit(EXIT_FAILED) from None
    raise SystemExit(run(make))


def _say(line: str) -> None:
    print("tavolo_bot.py_entry: " + " ".join(line.split()), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
