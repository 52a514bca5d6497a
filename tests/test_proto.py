"""The generated protobuf code is exactly what proto/ gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_regenerating_the_protobuf_code_changes_nothing():
    done = subprocess.run(
        [sys.executable, str(ROOT / "proto" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_referee_and_the_sdk_carry_the_same_generated_code():
    referee = ROOT / "referee" / "proto"
    sdk = ROOT / "clients" / "python" / "tavolo_bot" / "proto"
    names = sorted(p.name for p in referee.glob("*.py*"))
    assert names == sorted(p.name for p in sdk.glob("*.py*"))
    assert "referee_pb2.py" in names
    for name in names:
        assert (referee / name).read_bytes() == (sdk / name).read_bytes(), name
