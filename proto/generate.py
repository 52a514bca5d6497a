"""Generate the Python protobuf and gRPC code from proto/ for the referee and the bot SDK.

    python proto/generate.py            # write the generated packages
    python proto/generate.py --check    # exit 1 if they differ from what would be written

Needs grpcio-tools (pinned in pyproject.toml, so regenerating is byte-for-byte stable).
protoc writes absolute imports (``from tavolo.v1 import ...``); they are made relative
so the generated package can live inside ``referee`` and inside ``tavolo_bot``.
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
TARGETS = (ROOT / "referee" / "proto", ROOT / "clients" / "python" / "tavolo_bot" / "proto")
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
    for target in TARGETS:
        present = {p.name for p in target.glob("*.py*")} if target.exists() else set()
        for name, text in files.items():
            path = target / name
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
                if not check:
                    target.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8")
        for name in sorted(present - set(files)):
            stale.append(str((target / name).relative_to(ROOT)))
            if not check:
                (target / name).unlink()
    if check and stale:
        print("generated code is out of date; run python proto/generate.py:", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
