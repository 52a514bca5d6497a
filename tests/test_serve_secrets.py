"""``tavolo serve``: the admin token stays off command lines and out of bots; records are private.

A real ``tavolo serve`` process, real ``tavolo match`` calls, real bot processes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

from tests.network import free_port
from tests.test_cli import tavolo

TAVOLO = Path(sys.executable).with_name("tavolo")


def test_the_admin_token_comes_from_a_file_or_the_environment_only(tmp_path: Path) -> None:
    result = tavolo("serve", "--admin-token", "visible-to-all")
    assert result.exit_code == 2
    assert "No such option" in result.output

    token = "token-of-the-organiser-" + os.urandom(6).hex()
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n", encoding="utf-8")
    token_file.chmod(0o600)
    records = tmp_path / "records"
    port = free_port()
    address = f"127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k != "TAVOLO_ADMIN_TOKEN"}
    serve = subprocess.Popen(
        [str(TAVOLO), "serve", "--listen", address, "--records", str(records),
         "--admin-token-file", str(token_file)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        assert first.startswith("tavolo referee on"), first
        assert token not in Path(f"/proc/{serve.pid}/cmdline").read_text(errors="replace")
        # Records and their folder: the referee's user alone.
        assert stat.S_IMODE(records.stat().st_mode) == 0o700
        client_env = {**env, "TAVOLO_ADMIN_TOKEN": token}
        create = subprocess.run(
            [str(TAVOLO), "match", "create", "random", "random", "--seed", "tok",
             "--deals", "1", "--referee", address],
            env=client_env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert create.returncode == 0, create.stderr
        match_id = create.stdout.split()[1]
        for _ in range(300):
            status = subprocess.run(
                [str(TAVOLO), "match", "status", match_id, "--referee", address,
                 "--token-file", str(token_file)],
                env=env, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert status.returncode == 0, status.stderr
            if status.stdout.startswith("done"):
                break
            time.sleep(0.1)
        assert status.stdout.startswith("done"), status.stdout
        sandbox_line = status.stdout.splitlines()[1]
        assert sandbox_line.startswith("sandbox: random "), sandbox_line
        result = json.loads("\n".join(status.stdout.splitlines()[2:]))
        assert len(result["games"]) == 2
        record = records / f"{match_id}.jsonl"
        assert stat.S_IMODE(record.stat().st_mode) == 0o600
        # A wrong token file is refused by the referee with one line.
        wrong = tmp_path / "wrong"
        wrong.write_text("nope", encoding="utf-8")
        refused = subprocess.run(
            [str(TAVOLO), "match", "status", match_id, "--referee", address,
             "--token-file", str(wrong)],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            f"error: {address}: bad_token: wrong admin token"
        ]
    finally:
        serve.terminate()
        serve.wait(20)
