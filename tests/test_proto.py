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


def test_the_protocol_is_generated_into_one_package():
    """The referee uses the SDK's generated code: no second copy to drift or convert from."""
    generated = sorted(
        path.relative_to(ROOT).as_posix()
        for top in ("referee", "tournaments", "clients/python", "tests")
        for path in (ROOT / top).rglob("*_pb2*")
        if path.suffix in (".py", ".pyi")
    )
    assert generated == [
        "clients/python/tavolo_bot/proto/referee_pb2.py",
        "clients/python/tavolo_bot/proto/referee_pb2.pyi",
        "clients/python/tavolo_bot/proto/referee_pb2_grpc.py",
    ]
