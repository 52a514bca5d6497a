"""``buf breaking``: protocol v1 may grow but never break (proto/README.md)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
BUF = PROTO / "node_modules" / ".bin" / "buf"
BASELINE = PROTO / "baseline" / "tavolo-v1.binpb"

pytestmark = pytest.mark.skipif(
    not BUF.exists(), reason="no buf CLI: `make proto-lint` installs it (make test does)"
)


def _buf(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BUF), *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


def _breaking(tree: Path) -> subprocess.CompletedProcess[str]:
    return _buf("breaking", tree, "--against", BASELINE)


def _missing_from_the_baseline(tree: Path, image: Path) -> subprocess.CompletedProcess[str]:
    """What ``tree`` has that the baseline lacks: the check turned round, as make proto-lint
    runs it, where an addition shows as a deletion."""
    built = _buf("build", tree, "-o", image)
    assert built.returncode == 0, built.stdout + built.stderr
    return _buf("breaking", BASELINE, "--against", image)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "proto"
    shutil.copytree(PROTO, tree, ignore=shutil.ignore_patterns("node_modules", "baseline"))
    return tree


def _edit(tree: Path, old: str, new: str) -> None:
    path = tree / "tavolo" / "v1" / "referee.proto"
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def test_the_proto_as_it_stands_breaks_nothing() -> None:
    done = _breaking(PROTO)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_baseline_holds_everything_the_proto_has(tmp_path: Path) -> None:
    # So buf breaking guards every field released, not only the first release's.
    done = _missing_from_the_baseline(PROTO, tmp_path / "now.binpb")
    assert done.returncode == 0, done.stdout + done.stderr + "\nrun make proto-baseline"


def test_a_new_field_is_allowed(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    _edit(
        tree,
        "  uint32 attempts_left = 6;\n}",
        "  uint32 attempts_left = 6;\n  // new\n  uint32 hint = 99;\n}",
    )
    done = _breaking(tree)
    assert done.returncode == 0, done.stdout + done.stderr
    # ...and until make proto-baseline records it, the field is one the baseline lacks.
    missing = _missing_from_the_baseline(tree, tmp_path / "now.binpb")
    assert missing.returncode != 0
    needle = 'field "99" with name "hint" on message "DecisionRequest"'
    assert needle in missing.stdout, missing.stdout


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("uint32 deadline_ms = 2;", "uint64 deadline_ms = 2;", 'changed type from "uint32"'),
        ("uint32 deadline_ms = 2;", "uint32 deadline_millis = 2;", "deadline_ms"),
        ("uint32 attempts_left = 6;", "uint32 attempts_left = 7;", "attempts_left"),
    ],
)
def test_a_changed_field_is_refused(tmp_path: Path, old: str, new: str, needle: str) -> None:
    tree = _copy(tmp_path)
    _edit(tree, old, new)
    done = _breaking(tree)
    assert done.returncode != 0
    assert needle in done.stdout + done.stderr
