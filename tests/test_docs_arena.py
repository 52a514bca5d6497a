"""docs/arena.md's walkthrough runs as written: its arena file loads, and every command it
shows runs, in order, against a real ``tavolo arena serve`` over TLS, printing what the
page says it prints (``...`` standing for what differs each time)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx

from tests.test_arena_account import make_certificate
from tournaments.arena.archives import pack
from tournaments.arena.builds import build_command
from tournaments.arena.config import load_arena

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "arena.md"
TAVOLO = Path(sys.executable).with_name("tavolo")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}


def blocks(kind: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(rf"```{kind}\n(.*?)```", text, flags=re.S)


def commands() -> list[tuple[str, list[str]]]:
    """Each ``$ `` command of the console blocks (continued lines joined), and the lines the
    page shows it printing."""
    out: list[tuple[str, list[str]]] = []
    for block in blocks("console"):
        lines = block.replace("\\\n", " ").splitlines()
        for line in lines:
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
    return out


def shown(expected: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(p) for p in expected.split("...")))


def test_the_arena_file_of_the_page_loads(tmp_path: Path) -> None:
    example, manifest = blocks("toml")
    path = tmp_path / "arena.toml"
    path.write_text(example, encoding="utf-8")
    config = load_arena(path)
    assert config.name == "Tressette winter arena" and config.submissions.per_day == 5
    assert config.opens is not None and config.opens.isoformat() == "2027-01-10T12:00:00+00:00"
    assert tomllib.loads(example)["api"]["requests_per_minute"] == config.requests_per_minute
    assert config.build.seconds == 600 and config.build.output_mb == 512
    # The manifest of the page names its build as the arena reads it.
    (tmp_path / "bot.toml").write_text(manifest, encoding="utf-8")
    assert build_command(tmp_path / "bot.toml") == ("make", "mybot")


def test_the_machines_set_up_is_what_ci_sets_up() -> None:
    """The page's set-up from an empty machine: the Debian packages CI installs for the
    sandbox and the certificates, the Makefile's set-up target, and a certificate made as
    the tests make theirs."""
    [setup] = [b for b in blocks("sh") if "apt-get install" in b]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for package in ("bubblewrap", "openssl"):
        assert package in setup.split("\n")[0] and f"packages+=({package})" in ci
    assert "make setup" in setup
    assert re.search(r"^setup:", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    made = " ".join(setup.replace("\\\n", " ").split())
    assert "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes" in made


def test_every_command_of_the_walkthrough_runs(tmp_path: Path) -> None:
    """The page's commands in its order; between them, what the page says others do (Bob
    signs up with the invitation and submits, Alice submits a second bot), so that the
    ladder has a meeting to play and the final two finalists."""
    steps = commands()
    assert [c.split()[:3] for c, _ in steps] == [
        ["tavolo", "arena", "invite"], ["tavolo", "arena", "invitation"],
        ["tavolo", "arena", "serve"], ["export", "TAVOLO_ARENA_TOKEN=tav_..."],
        ["tavolo", "arena", "submit"], ["curl", "-H", '"Authorization:'],
        ["tavolo", "arena", "remote"],
        ["TAVOLO_REFEREE=arena.example:7443", "TAVOLO_KEY=tvk_...", "TAVOLO_TLS_CA=cert.pem"],
        ["tavolo", "arena", "admin"], ["tavolo", "arena", "disable"], ["tavolo", "arena", "freeze"],
        ["tavolo", "arena", "final"],
    ]  # fmt: skip
    example = blocks("toml")[0]
    # The season of the page's file is in the future; this run's is open now, and so is
    # its sign-up, for the invitation to be used.
    example = re.sub(r"\[season\].*?\n\n", "", example, flags=re.S)
    assert example.count("open = false") == 1
    (tmp_path / "arena.toml").write_text(example.replace("open = false", "open = true"), "utf-8")
    trust = make_certificate(tmp_path)
    for name, module in (("mybot", "random"), ("mybot2", "heuristic")):
        bot = tmp_path / name
        bot.mkdir()
        (bot / "bot.toml").write_text(
            f'name = "{name}"\ncommand = ["{sys.executable}", "bot.py"]\n'
        )
        (bot / "bot.py").write_text(f"from tavolo_bot.bots.{module} import main\n\nmain()\n")
    env = dict(ENV)
    token = code = url = key = referee = ""
    serve: subprocess.Popen[str] | None = None
    remote_bot: subprocess.Popen[str] | None = None
    http = httpx.Client(verify=trust, timeout=30)
    try:
        for command, expected in steps:
            argv = shlex.split(command)
            if argv[0] == "export":
                name, _, _ = argv[1].partition("=")
                env[name] = token
                continue
            if argv[0] == "curl":
                # The same request through a real HTTP client (curl may be missing here).
                alice = {"Authorization": f"Bearer {env['TAVOLO_ARENA_TOKEN']}"}
                answer = http.get(url + "api/v1/submissions", headers=alice)
                assert answer.status_code == 200 and answer.json()[0]["id"] == 1
                # Bob signs up and submits the same bot; Alice a second one.
                joined = http.post(url + "api/v1/signup", json={"name": "bob", "invitation": code})
                bob = {"Authorization": f"Bearer {joined.json()['token']}"}
                theirs = pack(tmp_path / "mybot")
                assert (
                    http.post(url + "api/v1/submissions", content=theirs, headers=bob).json()["id"]
                    == 2
                )
                second = pack(tmp_path / "mybot2")
                assert (
                    http.post(url + "api/v1/submissions", content=second, headers=alice).json()[
                        "id"
                    ]
                    == 3
                )
                deadline = time.monotonic() + 240
                while http.get(url + "api/v1/leaderboard").json()["games"] == 0:
                    assert time.monotonic() < deadline, "the ladder played no meeting"
                    time.sleep(0.5)
                # Each chooses its first for the final (the page's section on the end).
                for who, number in ((alice, 1), (bob, 2)):
                    chosen = http.post(url + f"api/v1/submissions/{number}/choose", headers=who)
                    assert chosen.status_code == 200, chosen.text
                continue
            if argv[0].startswith("TAVOLO_REFEREE="):
                # Alice's bot on "her machine": the key and address the arena gave her.
                mine = {**env, "TAVOLO_REFEREE": referee, "TAVOLO_KEY": key,
                        "TAVOLO_TLS_CA": str(tmp_path / "cert.pem")}  # fmt: skip
                assert argv[3:] == ["python3", "mybot/bot.py"]
                remote_bot = subprocess.Popen(
                    [sys.executable, "mybot/bot.py"], cwd=tmp_path, env=mine,
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                )  # fmt: skip
                alice = {"Authorization": f"Bearer {env['TAVOLO_ARENA_TOKEN']}"}
                deadline = time.monotonic() + 240
                while (
                    state := http.get(url + "api/v1/submissions/4", headers=alice).json()["state"]
                ) != "ready":
                    assert state not in ("failed",) and time.monotonic() < deadline, state
                    assert remote_bot.poll() is None, remote_bot.stderr
                    time.sleep(0.5)
                continue
            argv[0] = str(TAVOLO)
            if argv[2] == "serve":
                argv[argv.index("--listen") + 1] = "127.0.0.1:0"
                argv[argv.index("--referee-listen") + 1] = "127.0.0.1:0"
                serve = subprocess.Popen(
                    argv, cwd=tmp_path, env=env, text=True,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                )  # fmt: skip
                assert serve.stdout is not None
                line = serve.stdout.readline().rstrip("\n")
                assert shown(expected[0].replace("0.0.0.0:8443", "127.0.0.1:...")).fullmatch(
                    line
                ), line
                url = line.split()[-1]
                second = serve.stdout.readline().rstrip("\n")
                assert shown(expected[1].replace("7443", "...")).fullmatch(second), second
                referee = "127.0.0.1:" + second.split()[-1]
                continue
            if argv[2] in ("submit", "remote"):
                argv[argv.index("--arena") + 1] = url
                argv += ["--tls-ca", str(tmp_path / "cert.pem")]
            if argv[2] == "remote":
                expected = [e.replace("arena.example:7443", referee) for e in expected]
            if argv[2] == "disable":
                # Alice's second bot, number 3 here.
                argv[3] = "3"
                expected = [line.replace("17", "3") for line in expected]
            if argv[2] == "final":
                argv[argv.index("--games") + 1] = "2"  # one match of two games, here
                argv[argv.index("--listen") + 1] = "127.0.0.1:0"
            done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=600)  # fmt: skip
            assert done.returncode == 0, (command, done.stderr)
            # The final goes on to print the tournament's own progress and table.
            lines = (
                done.stdout.splitlines()[: len(expected)]
                if argv[2] == "final"
                else (done.stdout.splitlines())
            )
            assert len(lines) == len(expected), (command, done.stdout)
            for got, want in zip(lines, expected, strict=True):
                assert shown(want).fullmatch(got), (command, got, want)
            if argv[2] == "invite":
                token = done.stdout.split()[-1]
            if argv[2] == "remote":
                key = re.search(r"TAVOLO_KEY=(\S+)", done.stdout).group(1)  # type: ignore[union-attr]
            if argv[2] == "invitation":
                code = done.stdout.split()[1]
            if argv[2] == "admin":
                # The organiser signs in with it, as the page says, and reaches /admin.
                with httpx.Client(base_url=url, verify=trust, timeout=30) as browser:
                    form = browser.get("/signin").text
                    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
                    assert csrf is not None
                    answer = browser.post(
                        "/signin",
                        data={"csrf": csrf.group(1), "token": done.stdout.split()[-1]},
                    )
                    assert answer.headers["location"] == "/admin"
                    assert 'data-entrant="alice"' in browser.get("/admin").text
        assert (tmp_path / "final-report" / "index.html").is_file()
        final = (tmp_path / "arena.db.final.toml").read_text(encoding="utf-8")
        assert 'name = "alice"' in final and 'name = "bob"' in final
    finally:
        http.close()
        if remote_bot is not None:
            remote_bot.kill()
            remote_bot.wait(10)
        if serve is not None:
            serve.terminate()
            serve.wait(15)
