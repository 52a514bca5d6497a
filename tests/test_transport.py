"""gRPC's transport: the referee and the SDK choose gRPC core's own poller; bots do not inherit it.

Each check runs in a fresh Python process, because gRPC reads ``GRPC_EXPERIMENTS`` once,
when it loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee import grpc_transport
from tests.test_architecture import full_imports

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "clients" / "python"

# Round trips on one in-process stream; then how often gRPC's EventEngine worker threads
# went to sleep per trip. With EventEngine every message passes through them (about three
# sleeps a trip); with the core's own poller they stay idle.
_ECHO = """
import {package}
import asyncio, glob, json, os
import grpc

TRIPS = 300

def sleeps():
    total = 0
    for task in glob.glob("/proc/self/task/*"):
        if open(task + "/comm").read().strip() != "event_engine":
            continue
        for line in open(task + "/status"):
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total

async def echo(requests, context):
    async for message in requests:
        await context.write(message)

async def main():
    server = grpc.aio.server()
    handler = grpc.stream_stream_rpc_method_handler(echo)
    generic = grpc.method_handlers_generic_handler("t.E", {{"Echo": handler}})
    server.add_generic_rpc_handlers((generic,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{{port}}") as channel:
        call = channel.stream_stream("/t.E/Echo")()
        for _ in range(20):
            await call.write(b"x"); await call.read()
        before = sleeps()
        for _ in range(TRIPS):
            await call.write(b"x"); await call.read()
        after = sleeps()
        await call.done_writing()
    await server.stop(0)
    per_trip = (after - before) / TRIPS
    print(json.dumps({{"per_trip": per_trip, "env": os.environ.get("GRPC_EXPERIMENTS")}}))

asyncio.run(main())
"""


def _run(code: str, env_value: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    if env_value is not None:
        env["GRPC_EXPERIMENTS"] = env_value
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(SDK)])
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )


def _echo(package: str, env_value: str | None) -> dict[str, object]:
    done = _run(_ECHO.format(package=package), env_value)
    assert done.returncode == 0, done.stderr
    # gRPC says so on stderr when it does not know an experiment's name.
    assert "Unknown experiment" not in done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


linux_only = pytest.mark.skipif(
    not Path("/proc/self/task").is_dir(), reason="reads thread states from /proc"
)


@linux_only
@pytest.mark.parametrize("package", ["referee.service.server", "tavolo_bot"])
def test_importing_the_package_keeps_messages_off_the_event_engine_threads(package: str) -> None:
    chosen = _echo(package, None)
    assert chosen["env"] == grpc_transport.GRPC_EXPERIMENTS
    assert chosen["per_trip"] < 0.5
    # The same echo on gRPC's defaults: the check above can fail.
    defaults = _echo(package, "")
    assert defaults["env"] == ""
    assert defaults["per_trip"] >= 1.0


def test_the_sdk_chooses_what_the_referee_chooses() -> None:
    import tavolo_bot

    assert tavolo_bot.GRPC_EXPERIMENTS == grpc_transport.GRPC_EXPERIMENTS


def test_transport_says_what_grpc_loaded_with() -> None:
    code = "import {first}, {second}, referee.grpc_transport as t; print(repr(t.TRANSPORT))"
    ours = _run(code.format(first="os", second="referee.service.server"), None)
    assert ours.stdout.strip() == repr(grpc_transport.GRPC_EXPERIMENTS)
    # grpc imported first loads with its defaults: setting the variable then changes nothing.
    late = _run(code.format(first="grpc", second="os"), None)
    assert late.stdout.strip() == repr("")


def test_a_users_own_setting_is_kept() -> None:
    done = _run("import referee.service.server, os; print(os.environ['GRPC_EXPERIMENTS'])", "mine")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "mine"


_PRINT_ENV = "import os; print(os.environ.get('GRPC_EXPERIMENTS', '<unset>'))"


def _bot_sees(tmp_path: Path, env_value: str | None) -> str:
    """What a bot process started by the referee finds in GRPC_EXPERIMENTS."""
    # The referee runs in a process of its own, started with env_value as its variable.
    code = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from referee.sandbox.bot_process import start_bot\n"
        "from referee.entries import Entry\n"
        "async def main():\n"
        f"    bot = await start_bot(Entry('env', command=(sys.executable, '-c', {_PRINT_ENV!r})),"
        f" 'env', Path({str(tmp_path)!r}), {{}})\n"
        "    await bot.process.wait()\n"
        "    print((bot.workdir / 'stdout.log').read_text().strip())\n"
        "asyncio.run(main())\n"
    )
    done = _run(code, env_value)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(("env_value", "seen"), [(None, "<unset>"), ("mine", "mine")])
def test_bots_do_not_inherit_the_referees_choice(
    tmp_path: Path, env_value: str | None, seen: str
) -> None:
    # A gRPC core in another language may not know these experiments and complain.
    assert _bot_sees(tmp_path, env_value) == seen


_QUIET_IMPORT = """
import os, sys
before = dict(os.environ)
import {module}
print(dict(os.environ) == before, "grpc" in sys.modules)
"""


@pytest.mark.parametrize(
    "module", ["referee", "referee.engine.cards", "referee.engine.registry", "referee.engine.rules"]
)
def test_importing_the_engine_changes_nothing_in_the_process(module: str) -> None:
    """A researcher's notebook that imports the engine keeps its environment, and no grpc."""
    done = _run(_QUIET_IMPORT.format(module=module), None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]


def test_the_referee_modules_that_load_grpc_choose_its_transport_first() -> None:
    """Whichever of them a process imports first, gRPC loads with the referee's choice."""
    for module in ("referee.match.slots", "referee.service.server", "tournaments.cli.main"):
        code = f"import {module}, referee.grpc_transport as t; print(repr(t.TRANSPORT))"
        done = _run(code, None)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == repr(grpc_transport.GRPC_EXPERIMENTS), module


def _sdk_importers() -> list[str]:
    """The referee's and the tournaments' modules that import the SDK (its generated
    messages, mostly), but for the SDK bots of referee/bots, which are processes of their own."""
    return [
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in sorted(
            [*(ROOT / "referee").rglob("*.py"), *(ROOT / "tournaments").rglob("*.py")]
        )
        if "bots" not in path.relative_to(ROOT).parts
        and any(m.split(".")[0] == "tavolo_bot" for m in full_imports(path))
    ]


@pytest.mark.parametrize("module", _sdk_importers())
def test_the_modules_that_load_the_sdk_choose_grpcs_transport_first(module: str) -> None:
    """The SDK sets ``GRPC_EXPERIMENTS`` too: had it done so first, the referee would take the
    choice for its user's and pass it on to the bots it starts."""
    done = _run(
        f"import {module}, referee.grpc_transport as t; print(t.GRPC_EXPERIMENTS_SET_HERE)", None
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
