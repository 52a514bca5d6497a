"""The game families, one package each; importing this registers every one of them.

Each package's ``__init__`` registers its families and presets with
``referee.engine.registry``, which imports this package the first time a family is
looked up. A package here is found by being here: adding a family touches no file
outside its own package. Packages are registered in the order of their ``ORDER``.
"""

from __future__ import annotations

import importlib
import pkgutil


def _register_all() -> None:
    packages = [
        importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(__path__)
        if info.ispkg
    ]
    for package in sorted(packages, key=lambda p: (p.ORDER, p.__name__)):
        package.register_families()


_register_all()
