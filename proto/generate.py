"""Generate the Python protobuf and gRPC code from proto/ into the SDK's ``tavolo_bot.proto``.

    python proto/generate.py            # write the generated package
    python proto/generate.py --check    # exit 1 if it differs from what would be written

There is one generated package, the SDK's: bot authors install the SDK alone, and the
tavolo distribution ships the SDK too, so the referee imports its messages from there.
Needs grpcio-tools (pinned in pyproject.toml, so regenerating is byte-for-byte stable).
protoc writes absolute imports (``from tavolo.v1 import ...``); they are made relative
so the generated package can live inside ``tavolo_bot``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTOS = sorted(p.relative_to(PROTO_ROOT) for p in (PROTO_ROOT / "tavolo").rglob("*.proto"))
TARGET = ROOT / "clients" / "python" / "tavolo_bot" / "proto"
INIT = '"""Generated from proto/ by proto/generate.py: do not edit."""\n'


def generate() -> dict[str, str]:
    """File name -> content of every generated file."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [
                sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_ROOT}",
                f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}",
                *map(str, PROTOS),
            ],
            check=True,
        )  # fmt: skip
        files = {"__init__.py": INIT}
        for path in sorted(Path(out).rglob("*.py*")):
            text = path.read_text(encoding="utf-8")
            text = re.sub(r"^from tavolo\.v1 import ", "from . import ", text, flags=re.M)
            files[path.name] = text
        return files


def main() -> int:
    files = generate()
    check = "--check" in sys.argv[1:]
    stale = []
    present = {p.name for p in TARGET.glob("*.py*")} if TARGET.exists() else set()
    for name, text in files.items():
        path = TARGET / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(str(path.relative_to(ROOT)))
            if not check:
                TARGET.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    for name in sorted(present - set(files)):
        stale.append(str((TARGET / name).relative_to(ROOT)))
        if not check:
            (TARGET / name).unlink()
    if check and stale:
        print("generated code is out of date; run python proto/generate.py:", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
