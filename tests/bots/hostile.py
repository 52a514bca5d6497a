"""A hostile bot: plays the first legal action, and tries one attack on the machine.

    python tests/bots/hostile.py --attack NAME [--target ...] [--marker TEXT]

It is run only inside the real sandbox (tests/test_sandbox.py). Each attempt is made for
real, and its outcome is written to stderr as one line ``ATTACK {json}``, which the test
reads from the log the referee keeps outside the sandbox; the test also checks from the
outside that nothing happened (the other bots played on, no file appeared, ...).

Attacks (made when each ``GameStarted`` arrives, unless said otherwise):

- ``kill``: SIGKILL every other process it can see or guess a pid of;
- ``environ``: read every process's environment for other bots' tickets;
- ``tcp``: connect to each ``--target`` host:port (the referee's TCP listener), and
  to a port its partner listens on;
- ``files``: write its hand where a partner or the host could read it (``/tmp``, the
  work folder's parent, each ``--target`` path), and look for the partner's;
- ``abstract``: bind the abstract unix socket its partner binds, and connect to the
  partner's own;
- ``ptrace``: PTRACE_ATTACH to every process it can see but its own;
- ``records``: open each ``--target`` path (the records folder and a record);
- ``fork-bomb``: a child forks up to 10,000 sleeping processes; how many it made;
- ``double-fork``: a grandchild in a session of its own (if setsid is allowed), named
  ``--marker``, sleeping for ten minutes;
- ``disk``: 1 MB files into the work folder, ``/tmp`` and ``/dev/shm`` until refused;
- ``host``: what a bot could do to the host: the ``/proc/sys`` files it may write, writes
  to ``core_pattern``, ``file-max`` and ``panic`` (each its own value back), reads of
  ``/etc/shadow``, ``/etc/gshadow`` and ``/etc/ssl/private/*``; making a user namespace;
  its uid map and capabilities;
- ``counters``: at its first game, reads the machine's counters (``/proc/loadavg``,
  ``stat``, ``meminfo``, ``sys/fs/file-nr``, ``inode-nr``) for 1.5 s, and says how many
  different contents each showed, and what ``/proc/pressure`` holds;
- ``remember``: writes each hand it is dealt to its work folder, and at each game start
  reports what it finds there from earlier games;
- ``cpu-hog``: at its first game, ``--count`` busy loops, one process each, that spin
  until the sandbox ends (a bot that starves its opponents' thinking), with ``--marker``
  in their command line; each loop tries to
  lead a session of its own, which the kernel's autogroup would schedule as a group of its
  own, and the first says how that went (``setsid``: ``ok`` or the error);
- ``kernel-objects``: when its first hand arrives, publishes it through every kernel
  object another sandbox might reach (POSIX and OFD byte-range locks and a ``flock`` on
  ``/etc/passwd``, keys in the session and user keyrings, a System V shared memory
  segment, a futex in a shared mapping of ``/etc/passwd``), then reads every other slot's
  from each; and says what each further call that might cross sandboxes answered
  (inotify, fanotify, ``mincore``, ``POSIX_FADV_DONTNEED``, io_uring, userfaultfd, bpf,
  ``unshare``, ``clone3``);
- ``linger``: from its first game on, a thread says every 20 ms that the process still
  runs (``heartbeat``, with the game and ``time.monotonic()``, one clock for the whole
  machine), and each hand that arrives is reported (``dealt``): a process that outlives
  its game while another game of the same deals is dealt shows;
- ``shared-lock``: at its first game, four threads take turns holding one
  ``multiprocessing.Lock`` (a process-shared semaphore) for 10 ms, twenty times each, as
  the workers of a bot's process pool do;
- ``connections``: at its first game, 2,000 connections to its own referee socket, each
  held open; how many the referee kept (a connection it refuses is closed at once);
- ``tempo``: a colluder's think-time channel. Before each answer it sleeps 5 ms for a 0
  and 65 ms for a 1 (the bits of a hash of its slot and decision number), and says which
  bit it sent and when it answered; it also says when each request arrived, so the test
  can read the partner's bits off the time between its own answer and its next request;
- ``ponder``: ``linger``'s heartbeat, and each decision says when it was asked and when
  it answered: a process that runs while another is on move shows;
- ``memory-hog``: at its first game, ``--count`` processes that each fill ``--megabytes``
  of memory and wait; once each has filled it or died, how many are alive and how many
  the kernel killed (SIGKILL); with ``--then-exit``, the bot then exits with status 3;
- ``page-cache``: partners agree on files of ``/usr/share`` (:func:`page_cache_files`),
  80 for each seat and deal. At its first decision of a deal a bot reads, for each card,
  the first of its pair of files if it holds the card and the second if not; at its
  first decision after its partner's first card it times a one-byte read of each of its
  partner's pairs, takes the
  faster file of each pair for the one read (its page is cached), and says what it learned.
  No system call is refused along the way: reads, and a clock;
- ``cpu-cache``: Flush+Reload through the CPU caches, with the timer ``--target`` (a
  shared object built from ``cache_probe.c``). Partners map ``libc.so.6`` read-only, the
  same physical pages for every sandbox; each seat owns 40 lines of it, a card each. At
  every decision a bot first times a load of each of its partner's lines if the partner
  has played since it last flushed them (a fast load: the partner loaded it meanwhile),
  then flushes them, then loads its own lines of the cards it was dealt. It says what it
  read (``cpu-cache``) and the hand it was dealt (``cpu-cache-hand``);
- ``sysinfo``: the machine's process count, which ``sysinfo(2)`` gives every sandbox.
  Before each card it plays, a bot holds 12 idle threads if it holds the card of
  ``CARDS`` numbered by the cards it has played so far in the deal, and none if not; at
  each decision it reads the count, and says it with the card its partner's last play
  stood for (``sysinfo``), and the hand it was dealt (``sysinfo-hand``).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import errno
import fcntl
import functools
import hashlib
import json
import os
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, NoReturn

from tavolo_bot.bot import Bot
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.runner import main as run_main
from tavolo_bot.turn import Turn

ARGS: argparse.Namespace
PARTNER_PORT = 47_000
MEMORY = Path("deal-memory.jsonl")


def report(attack: str, **facts: Any) -> None:
    """One ``ATTACK`` line on stderr, for the test to read."""
    line = json.dumps({"attack": attack, "pid": os.getpid(), **facts}, sort_keys=True)
    print(f"ATTACK {line}", file=sys.stderr, flush=True)


def visible_pids() -> list[int]:
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def tickets_seen() -> dict[int, str]:
    """pid -> TAVOLO_TICKET of every process whose environment it can read."""
    out = {}
    for pid in visible_pids():
        try:
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        for item in raw.split(b"\0"):
            if item.startswith(b"TAVOLO_TICKET="):
                out[pid] = item.split(b"=", 1)[1].decode(errors="replace")
    return out


def _error(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, str(exc.errno))


class HostileBot(Bot):
    def __init__(self) -> None:
        self.slot = -1
        self.game = 0
        self.hand: list[str] = []
        self.seat = -1
        self.deal = -1
        self.deal_decisions = 0
        self.partner_played = False
        self.partner_read = -1
        self.played: Counter[int] = Counter()
        self.hand_written: set[int] = set()
        self.published: threading.Thread | None = None
        self.game_of_process: int | None = None
        self.decisions = 0

    def on_event(self, event: pb.Event) -> None:
        kind = event.WhichOneof("event")
        if kind == "welcome":
            self.slot = event.welcome.slot
        elif kind == "game_started":
            self.game, self.seat, self.deal = event.game_started.game, event.game_started.seat, -1
            getattr(self, "attack_" + ARGS.attack.replace("-", "_"))()
        elif kind == "hand_dealt" and ARGS.attack == "cpu-cache":
            self.hand = list(event.hand_dealt.cards)
            self.deal, self.partner_played = self.deal + 1, False
            report("cpu-cache-hand", game=self.game, deal=self.deal, seat=self.seat, hand=self.hand)
        elif kind == "card_played" and ARGS.attack == "cpu-cache":
            if event.card_played.seat == (self.seat + 2) % 4:
                self.partner_played = True
        elif kind == "hand_dealt" and ARGS.attack == "sysinfo":
            self.hand = list(event.hand_dealt.cards)
            self.deal, self.played = self.deal + 1, Counter[int]()
            report("sysinfo-hand", game=self.game, deal=self.deal, seat=self.seat, hand=self.hand)
        elif kind == "card_played" and ARGS.attack == "sysinfo":
            self.played[event.card_played.seat] += 1
        elif kind == "hand_dealt" and ARGS.attack == "page-cache":
            self.hand = list(event.hand_dealt.cards)
            self.deal, self.deal_decisions, self.partner_played = self.deal + 1, 0, False
        elif kind == "card_played" and event.card_played.seat == (self.seat + 2) % 4:
            self.partner_played = True  # its first decision, which publishes, is past
        elif kind == "hand_dealt" and ARGS.attack == "linger":
            report("dealt", game=self.game, t=time.monotonic())
        elif kind == "hand_dealt" and ARGS.attack in ("remember", "files"):
            self.keep_hand(list(event.hand_dealt.cards))
        elif kind == "hand_dealt" and ARGS.attack == "kernel-objects" and self.published is None:
            # In a thread: the referee deals to the next seat only once this event is
            # handled, and the partners' attempts must overlap as colluders' would.
            attack = KernelObjects(self.slot, list(event.hand_dealt.cards))
            self.published = threading.Thread(target=attack.run)
            self.published.start()

    def choose(self, turn: Turn) -> int:
        if ARGS.attack == "tempo":
            return self.tempo(turn)
        if ARGS.attack == "page-cache":
            self.page_cache()
        if ARGS.attack == "sysinfo":
            self.sysinfo.decide(self)
        if ARGS.attack == "cpu-cache":
            self.cpu_cache.decide(self.game, self.deal, self.seat, self.hand, self.partner_played)
            self.partner_played = False
        if ARGS.attack == "ponder":
            asked = time.monotonic()
            time.sleep(0.03)  # long enough for a heartbeat of its own
            report("decision", game=self.game, asked=asked, t=time.monotonic())
        if self.published is not None:
            self.published.join()  # the game waits for the attack
        return turn.legal[0].id

    # -- the attacks ---------------------------------------------------------------------

    def attack_kill(self) -> None:
        me = os.getpid()
        killed, refused = [], []
        for pid in visible_pids():
            if pid in (me, 1):
                continue
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError as exc:
                refused.append((pid, _error(exc)))
        # Guess pids too: a process it cannot list is still there to signal if reachable.
        reachable = []
        own = {int(t) for t in os.listdir("/proc/self/task")}  # its own threads answer too
        for pid in range(2, 40_000):
            if pid in own:
                continue
            try:
                os.kill(pid, 0)
                reachable.append(pid)
            except OSError:
                pass
        report("kill", killed=killed, refused=refused, reachable=reachable)

    def attack_environ(self) -> None:
        seen = tickets_seen()
        foreign = sorted({t for t in seen.values() if t != self.ticket})
        report("environ", pids=visible_pids(), foreign_tickets=foreign)

    def attack_tcp(self) -> None:
        results = {}
        for target in ARGS.target:
            host, _, port = target.rpartition(":")
            results[target] = self._connect((host, int(port)))
        # Partners: slot 0 listens, slot 1 connects (they are two processes of one side).
        listening = None
        if self.slot % 2 == 0:
            try:
                server = socket.socket()
                server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                server.bind(("127.0.0.1", PARTNER_PORT + self.game))
                server.listen()
                self._keep = server
                listening = True
            except OSError as exc:
                listening = _error(exc)
        else:
            time.sleep(0.3)
            results["partner"] = self._connect(("127.0.0.1", PARTNER_PORT + self.game))
        report("tcp", results=results, listening=listening)

    @staticmethod
    def _connect(address: tuple[str, int]) -> str:
        try:
            with socket.create_connection(address, timeout=2):
                return "connected"
        except OSError as exc:
            return _error(exc) if exc.errno else type(exc).__name__

    def keep_hand(self, cards: list[str]) -> None:
        if self.game in self.hand_written:
            return
        self.hand_written.add(self.game)
        line = json.dumps({"game": self.game, "slot": self.slot, "cards": cards})
        if ARGS.attack == "remember":
            with MEMORY.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
            return
        written, refused = [], {}
        places = [Path("/tmp/tavolo-collude"), Path.cwd().parent / "tavolo-collude"]
        places += [Path(t) for t in ARGS.target]
        for place in places:
            try:
                place.write_text(line, encoding="utf-8")
                written.append(str(place))
            except OSError as exc:
                refused[str(place)] = _error(exc)
        time.sleep(0.3)
        found = {}
        for place in places:
            try:
                text = place.read_text(encoding="utf-8")
            except OSError:
                continue
            if json.loads(text)["slot"] != self.slot:
                found[str(place)] = text
        report("files", written=written, refused=refused, partner_found=found)

    def attack_files(self) -> None:
        pass  # made when the hand arrives (keep_hand), so there is a hand to leak

    def attack_abstract(self) -> None:
        shared = b"\0tavolo-collude"
        own = b"\0tavolo-collude-slot-%d" % self.slot
        partner = b"\0tavolo-collude-slot-%d" % (self.slot ^ 1)
        facts: dict[str, Any] = {}
        for name, address in (("shared", shared), ("own", own)):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.bind(address)
                s.listen()
                facts[f"bind_{name}"] = "bound"
                setattr(self, f"_keep_{name}", s)
            except OSError as exc:
                facts[f"bind_{name}"] = _error(exc)
        time.sleep(0.3)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            c.connect(partner)
            facts["partner"] = "connected"
        except OSError as exc:
            facts["partner"] = _error(exc)
        report("abstract", **facts)

    def attack_ptrace(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        me = os.getpid()
        attached, refused = [], {}
        for pid in visible_pids():
            if pid == me or pid == 1:
                continue
            if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
                attached.append(pid)
                libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
            else:
                refused[pid] = errno.errorcode.get(ctypes.get_errno(), "?")
        # A partner's pid outside the sandbox, guessed: ptrace of pids it cannot see.
        guessed = [p for p in range(2, 5000) if p != me and libc.ptrace(16, p, None, None) == 0]
        report("ptrace", attached=attached, refused=refused, guessed=guessed)

    def attack_records(self) -> None:
        results = {}
        for target in ARGS.target:
            path = Path(target)
            try:
                if path.is_dir():
                    results[target] = sorted(os.listdir(path))
                else:
                    results[target] = path.read_text(encoding="utf-8")[:200]
            except OSError as exc:
                results[target] = _error(exc)
            if not path.exists() and target not in results:
                results[target] = "ENOENT"
        report("records", results=results, exists={t: Path(t).exists() for t in ARGS.target})

    def attack_fork_bomb(self) -> None:
        if self.game != 1 and self.hand_written:
            return
        self.hand_written.add(0)
        bomb = (
            "import os, time, signal\n"
            "kids, error = [], None\n"
            "for _ in range(10_000):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except OSError as exc:\n"
            "        error = exc.strerror\n"
            "        break\n"
            "    if pid == 0:\n"
            "        time.sleep(60)\n"
            "        os._exit(0)\n"
            "    kids.append(pid)\n"
            "print(len(kids), error, flush=True)\n"
            "for pid in kids:\n"
            "    os.kill(pid, signal.SIGKILL)\n"
            "for pid in kids:\n"
            "    os.waitpid(pid, 0)\n"
        )
        done = subprocess.run([sys.executable, "-c", bomb], capture_output=True, text=True)
        count, _, error = done.stdout.strip().partition(" ")
        report("fork-bomb", forked=int(count or -1), error=error, status=done.returncode)

    def attack_double_fork(self) -> None:
        if os.fork() == 0:
            # Every sandbox refuses it: the grandchild stays in the bot's session.
            with contextlib.suppress(OSError):
                os.setsid()
            if os.fork() == 0:
                libc = ctypes.CDLL(None)
                libc.prctl(15, ARGS.marker.encode()[:15], 0, 0, 0)  # PR_SET_NAME
                os.closerange(0, 1024)
                time.sleep(600)
            os._exit(0)
        os.wait()
        # Long enough for the test, outside, to see the grandchild before the game ends.
        time.sleep(0.3)
        report("double-fork", marker=ARGS.marker)

    def attack_disk(self) -> None:
        written, error = 0, None
        block = b"x" * (1 << 20)
        places = [Path.cwd(), Path("/tmp"), Path("/dev/shm")]
        for place in places:
            try:
                for n in range(100_000):
                    with open(place / f"fill-{self.game}-{n}", "wb") as f:
                        f.write(block)
                    written += 1
            except OSError as exc:
                error = _error(exc)
        report("disk", megabytes=written, error=error)

    def _first_attack(self) -> bool:
        """True once per process: at its first game."""
        first = not self.hand_written
        self.hand_written.add(0)
        return first

    def attack_cpu_hog(self) -> None:
        if not self._first_attack():
            return
        spin = (
            f"# {ARGS.marker}\n"
            "import errno, json, os, sys\n"
            "first = True\n"
            f"for _ in range({ARGS.count} - 1):\n"
            "    if os.fork() == 0:\n"
            "        first = False\n"
            "        break\n"
            "try:\n"
            "    os.setsid()\n"
            "    said = 'ok'\n"
            "except OSError as exc:\n"
            "    said = errno.errorcode[exc.errno]\n"
            "if first:\n"
            "    line = json.dumps({'attack': 'setsid', 'result': said})\n"
            "    print('ATTACK ' + line, file=sys.stderr, flush=True)\n"
            "while True:\n"
            "    pass\n"
        )
        # Not waited for: the loops end only with the sandbox.
        subprocess.Popen([sys.executable, "-c", spin])
        report("cpu-hog", loops=ARGS.count)

    def tempo(self, turn: Turn) -> int:
        asked = time.monotonic()
        self.decisions += 1
        digest = hashlib.sha256(f"{self.slot}/{self.game}/{self.decisions}".encode()).digest()
        bit = digest[0] & 1
        time.sleep(0.065 if bit else 0.005)
        report("tempo", game=self.game, slot=self.slot, bit=bit, asked=asked, t=time.monotonic())
        return turn.legal[0].id

    def attack_ponder(self) -> None:
        self.attack_linger()

    def attack_tempo(self) -> None:
        pass  # made at each decision (tempo)

    def attack_linger(self) -> None:
        if self.game_of_process is None:
            self.game_of_process = self.game
            threading.Thread(target=self._heartbeat, daemon=True).start()

    def _heartbeat(self) -> None:
        while True:
            report("heartbeat", game=self.game_of_process, t=time.monotonic())
            time.sleep(0.02)

    def attack_connections(self) -> None:
        if not self._first_attack():
            return
        path = os.environ["TAVOLO_REFEREE"].removeprefix("unix:")
        held, refused = [], 0
        for _ in range(2000):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
            except OSError:
                refused += 1
                s.close()
                continue
            held.append(s)
        time.sleep(1.0)  # the referee closes what it refuses
        kept = 0
        for s in held:
            s.setblocking(False)
            try:
                kept += s.recv(1) != b""  # data: an HTTP/2 greeting, so kept
            except BlockingIOError:
                kept += 1  # open, nothing said yet
            except OSError:
                pass
        report("connections", tried=2000, refused=refused, kept=kept)
        time.sleep(2.0)  # held while the test counts the referee's descriptors

    def attack_shared_lock(self) -> None:
        import multiprocessing

        lock = multiprocessing.Lock()

        def hammer() -> None:
            for _ in range(20):
                with lock:
                    time.sleep(0.01)  # the others wait in the kernel meanwhile

        threads = [threading.Thread(target=hammer) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        report("shared-lock", result="ok")

    def attack_kernel_objects(self) -> None:
        pass  # made when the hand arrives, so there is a hand to publish

    def attack_memory_hog(self) -> None:
        if not self._first_attack():
            return
        # A helper forks the hogs, not this process, whose gRPC threads a fork would copy.
        hog = (
            "import json, os, select, signal, time\n"
            f"size, count = {ARGS.megabytes << 20}, {ARGS.count}\n"
            "r, w = os.pipe()\n"
            "kids = []\n"
            "for _ in range(count):\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        block = bytearray(size)\n"
            "        block[::4096] = b'x' * len(range(0, size, 4096))  # every page\n"
            "        os.write(w, b'1')\n"
            "        time.sleep(120)\n"
            "        os._exit(0)\n"
            "    kids.append(pid)\n"
            "filled, ended, statuses = 0, {}, []\n"
            "deadline = time.monotonic() + 60\n"
            "while filled + len(ended) < count and time.monotonic() < deadline:\n"
            "    if select.select([r], [], [], 0.05)[0]:\n"
            "        filled += len(os.read(r, 64))\n"
            "    for pid in kids:\n"
            "        if pid not in ended:\n"
            "            done, status = os.waitpid(pid, os.WNOHANG)\n"
            "            if done:\n"
            "                ended[pid] = status\n"
            "killed = [s for s in ended.values()\n"
            "          if os.WIFSIGNALED(s) and os.WTERMSIG(s) == signal.SIGKILL]\n"
            "other = [s for s in ended.values() if s not in killed]\n"
            "alive = [p for p in kids if p not in ended]\n"
            "for pid in alive:\n"
            "    os.kill(pid, signal.SIGKILL)\n"
            "    os.waitpid(pid, 0)\n"
            "print(json.dumps({'alive': len(alive), 'filled': filled,\n"
            "                  'killed': len(killed), 'other': other}))\n"
        )
        done = subprocess.run([sys.executable, "-c", hog], capture_output=True, text=True)
        facts = json.loads(done.stdout) if done.returncode == 0 else {"status": done.returncode}
        report("memory-hog", megabytes=ARGS.megabytes, **facts)
        if ARGS.then_exit:
            os._exit(3)

    def attack_host(self) -> None:
        writable, written = [], {}
        for root, _, files in os.walk("/proc/sys"):
            for name in files:
                if os.access(os.path.join(root, name), os.W_OK):
                    writable.append(os.path.join(root, name))
        # Each knob gets its own value back: were the write let through, nothing changes.
        for knob in ("kernel/core_pattern", "fs/file-max", "kernel/panic"):
            path = Path("/proc/sys") / knob
            try:
                path.write_text(path.read_text())
                written[knob] = "ok"
            except OSError as exc:
                written[knob] = _error(exc)
        secrets_read = {}
        for path in ("/etc/shadow", "/etc/gshadow", *map(str, Path("/etc/ssl/private").glob("*"))):
            try:
                Path(path).read_bytes()
                secrets_read[path] = "ok"
            except OSError as exc:
                secrets_read[path] = _error(exc)
        # A user namespace of its own, from a process with one thread (the kernel says
        # EINVAL to a process that shares its memory, whatever else holds).
        probe = (
            "import ctypes, errno, sys; libc = ctypes.CDLL(None, use_errno=True); "
            "failed = libc.unshare(0x10000000); "  # CLONE_NEWUSER
            "print(errno.errorcode[ctypes.get_errno()] if failed else 'ok')"
        )
        userns = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        status = Path("/proc/self/status").read_text().splitlines()
        report(
            "host",
            user_namespace=userns.stdout.strip() or userns.stderr.strip(),
            uid_map=Path("/proc/self/uid_map").read_text().split(),
            uid=os.getuid(),
            cap_eff=next(x.split()[1] for x in status if x.startswith("CapEff:")),
            no_new_privs=next(x.split()[1] for x in status if x.startswith("NoNewPrivs:")),
            writable=writable,
            written=written,
            secrets=secrets_read,
        )

    def attack_counters(self) -> None:
        if not self._first_attack():
            return
        seen: dict[str, set[str]] = {}
        names = ("loadavg", "stat", "meminfo", "sys/fs/file-nr", "sys/fs/inode-nr")
        until = time.monotonic() + 1.5
        while time.monotonic() < until:
            for name in names:
                try:
                    text = Path("/proc", name).read_text()
                except OSError as exc:
                    text = _error(exc)
                seen.setdefault(name, set()).add(text)
            time.sleep(0.01)
        report(
            "counters",
            distinct={name: len(texts) for name, texts in seen.items()},
            pressure=sorted(os.listdir("/proc/pressure"))
            if os.path.isdir("/proc/pressure")
            else None,
        )

    def attack_page_cache(self) -> None:
        pass  # made on its decisions: see page_cache()

    def page_cache(self) -> None:
        self.deal_decisions += 1
        files = page_cache_files()
        if self.deal_decisions == 1:
            mine = page_cache_region(files, self.game, self.deal, self.seat)
            for i, card in enumerate(CARDS):
                read_first_page(mine[2 * i + (card not in self.hand)])
        if self.partner_played and self.partner_read != self.deal:
            self.partner_read = self.deal
            partner = (self.seat + 2) % 4
            theirs = page_cache_region(files, self.game, self.deal, partner)
            learned, undecided, times = [], 0, []
            for i, card in enumerate(CARDS):
                held, other = (time_first_byte(theirs[2 * i + k]) for k in (0, 1))
                times.append((round(held, 1), round(other, 1)))
                if max(held, other) < WARM_MICROSECONDS:
                    undecided += 1  # both cached before the deal: this pair says nothing
                elif held < other:
                    learned.append(card)
            report("page-cache", game=self.game, deal=self.deal, seat=self.seat,
                   hand=self.hand, partner=partner, learned=learned, undecided=undecided,
                   times=times)  # fmt: skip

    def attack_cpu_cache(self) -> None:
        if not hasattr(self, "cpu_cache"):
            self.cpu_cache = FlushReload(ARGS.target[0])

    def attack_sysinfo(self) -> None:
        if not hasattr(self, "sysinfo"):
            self.sysinfo = ProcessCount()

    def attack_remember(self) -> None:
        found = []
        if MEMORY.exists():
            found = [json.loads(line) for line in MEMORY.read_text(encoding="utf-8").splitlines()]
        report("remember", game=self.game, found=found)


CARDS = [rank + suit for suit in "DCSB" for rank in "32AKQJ7654"]
PAGE_CACHE_ROOT = "/usr/share"
PAGE_CACHE_PAIRS = 40
"""A pair of files a card: one read for holding it, the other for not."""
PAGE_CACHE_DEALS = 4
"""Deals of a game with a region of their own."""
WARM_MICROSECONDS = 20.0
"""A one-byte read faster than this came from the page cache (a disk read takes 100 or more)."""


@functools.cache
def page_cache_files() -> list[str]:
    """The files colluders agree on, in order: world-readable regular files of 8 KiB or
    more under :data:`PAGE_CACHE_ROOT`, in folders anyone may enter. The test computes
    the same list outside the sandbox."""
    found = []
    for root, dirs, files in os.walk(PAGE_CACHE_ROOT):
        dirs[:] = sorted(d for d in dirs if _open_to_all(os.path.join(root, d), stat.S_ISDIR))
        for name in sorted(files):
            path = os.path.join(root, name)
            if _open_to_all(path, stat.S_ISREG) and os.lstat(path).st_size >= 8192:
                found.append(path)
    return found


def _open_to_all(path: str, kind: Any) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    need = stat.S_IROTH | (stat.S_IXOTH if kind is stat.S_ISDIR else 0)
    return bool(kind(mode)) and mode & need == need


def page_cache_region(files: list[str], game: int, deal: int, seat: int) -> list[str]:
    """The files a seat publishes a deal's hand through."""
    index = ((game - 1) * PAGE_CACHE_DEALS + deal) * 4 + seat
    size = 2 * PAGE_CACHE_PAIRS
    return files[index * size : (index + 1) * size]


def read_first_page(path: str) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.pread(descriptor, 4096, 0)
    finally:
        os.close(descriptor)


def time_first_byte(path: str) -> float:
    """Microseconds a one-byte read of ``path`` took (it caches the page)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        start = time.perf_counter_ns()
        os.pread(descriptor, 1, 0)
        return (time.perf_counter_ns() - start) / 1000
    finally:
        os.close(descriptor)


class ProcessCount:
    """The ``sysinfo`` attack: 12 idle threads for a 1, none for a 0."""

    THREADS = 12

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.info = ctypes.create_string_buffer(112)  # struct sysinfo on 64 bits
        self.release: threading.Event | None = None

    def procs(self) -> int:
        if self.libc.sysinfo(self.info) != 0:
            return -1
        return int(struct.unpack_from("=H", self.info, 80)[0])  # after uptime, loads, ram, swap

    def mine(self) -> int:
        """Threads of its own in the count: it sends too."""
        return 0 if self.release is None else self.THREADS

    def decide(self, bot: HostileBot) -> None:
        partner = (bot.seat + 2) % 4
        sent = bot.played[partner]
        if sent:
            report("sysinfo", game=bot.game, deal=bot.deal, seat=bot.seat, partner=partner,
                   card=CARDS[sent - 1], procs=self.procs() - self.mine())  # fmt: skip
        one = CARDS[bot.played[bot.seat]] in bot.hand
        if one and self.release is None:
            self.release = threading.Event()
            for _ in range(self.THREADS):
                threading.Thread(target=self.release.wait, daemon=True).start()
        elif not one and self.release is not None:
            self.release.set()
            self.release = None
            time.sleep(0.005)  # the threads end


class FlushReload:
    """The ``cpu-cache`` attack: 40 lines of ``libc.so.6`` a seat, a card a line."""

    LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
    FIRST_PAGE = 64
    """Lines sit on pages of their own (no prefetcher pulls in a neighbour), from here."""

    def __init__(self, probe: str) -> None:
        self.lib = ctypes.CDLL(probe)
        self.lib.reload.restype = ctypes.c_uint64
        self.lib.reload.argtypes = [ctypes.c_void_p]
        self.lib.flush.argtypes = [ctypes.c_void_p]
        libc = ctypes.CDLL(None)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                              ctypes.c_int, ctypes.c_int, ctypes.c_long]  # fmt: skip
        descriptor = os.open(self.LIBC, os.O_RDONLY)
        size = os.fstat(descriptor).st_size
        self.base = int(libc.mmap(None, size, 1, 1, descriptor, 0))  # PROT_READ, MAP_SHARED
        self.threshold = self._calibrate()

    def line(self, seat: int, card: int) -> int:
        return self.base + 4096 * (self.FIRST_PAGE + 40 * seat + card) + 64 * 7

    def _calibrate(self) -> float:
        """Cycles between a cached load and one from memory, from this process's own."""
        line = self.line(3, 39) + 4096 * 8
        hits, misses = [], []
        for _ in range(200):
            self.lib.reload(line)
            hits.append(self.lib.reload(line))
            self.lib.flush(line)
            misses.append(self.lib.reload(line))
        hit, miss = sorted(hits)[100], sorted(misses)[100]
        return float(hit + (miss - hit) / 2)

    def decide(
        self, game: int, deal: int, seat: int, hand: list[str], partner_played: bool
    ) -> None:
        partner = (seat + 2) % 4
        if partner_played:
            cycles = [self.lib.reload(self.line(partner, i)) for i in range(40)]
            learned = [c for c, t in zip(CARDS, cycles, strict=True) if t < self.threshold]
            report("cpu-cache", game=game, deal=deal, seat=seat, partner=partner,
                   learned=learned, cycles=cycles, threshold=self.threshold)  # fmt: skip
        for i in range(40):
            self.lib.flush(self.line(partner, i))
        for card in hand:
            self.lib.reload(self.line(seat, CARDS.index(card)))


LOCK_BASE, OFD_BASE = 1_000, 2_000  # byte offsets in /etc/passwd, 40 per slot
F_OFD_GETLK, F_OFD_SETLK = 36, 37
SLOTS = range(4)


class KernelObjects:
    """The ``kernel-objects`` attack: one hand out through each shared object, then in."""

    def __init__(self, slot: int, hand: list[str]) -> None:
        self.slot, self.hand = slot, hand
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.syscall.restype = ctypes.c_long
        self.libc.mmap.restype = ctypes.c_void_p
        self.libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                   ctypes.c_int, ctypes.c_int, ctypes.c_long]  # fmt: skip
        self.errors: dict[str, str] = {}
        self.learned: dict[str, dict[int, list[str]]] = {}
        self.kept: list[Any] = []  # descriptors whose locks must outlive run()

    def call(self, name: str, number: int, *args: Any) -> int:
        """A raw system call; its errno name in ``errors`` when it fails."""
        result = self.libc.syscall(ctypes.c_long(number), *args)
        if result < 0:
            self.errors[name] = errno.errorcode.get(ctypes.get_errno(), "?")
        else:
            self.errors.setdefault(name, "ok")
        return int(result)

    def guard(self, name: str, action: Any) -> Any:
        try:
            result = action()
            self.errors.setdefault(name, "ok")
            return result
        except OSError as exc:
            self.errors[name] = _error(exc)
            return None

    def learn(self, channel: str, slot: int, card: str) -> None:
        self.learned.setdefault(channel, {}).setdefault(slot, []).append(card)

    def run(self) -> None:
        passwd = os.open("/etc/passwd", os.O_RDONLY)
        self.kept.append(passwd)
        futex = self.libc.mmap(None, 4096, 1, 1, passwd, 0)  # PROT_READ, MAP_SHARED
        # The partner is dealt to only once this seat has acted: a colluder's waiter
        # stays up across decisions, and says what it got in a line of its own.
        threading.Thread(target=self.futex_wait, args=(futex,), daemon=True).start()
        self.publish(passwd)
        time.sleep(0.6)  # the other sandboxes publish too
        self.read_back(passwd)
        woken = dict.fromkeys((s for s in SLOTS if s != self.slot), 0)
        for _ in range(30):  # the partner's waiter may start later: knock for 1.5 s
            for s in woken:
                address = ctypes.c_void_p(futex + 4 * s)
                woken[s] += max(0, self.call("futex_wake", 202, address, 1, 1))
            time.sleep(0.05)
        self.try_others(passwd, futex)
        report(
            "kernel-objects",
            slot=self.slot,
            hand=self.hand,
            learned=self.learned,
            futex_woken={s: n for s, n in woken.items() if n > 0},
            errors=self.errors,
        )

    def futex_wait(self, futex: int) -> None:
        address = futex + 4 * self.slot
        value = ctypes.c_uint32.from_address(address).value
        timeout = (ctypes.c_long * 2)(8, 0)
        result = self.libc.syscall(ctypes.c_long(202), ctypes.c_void_p(address), 0,
                                   ctypes.c_uint32(value), timeout, None, 0)  # fmt: skip
        said = "woken" if result == 0 else errno.errorcode.get(ctypes.get_errno())
        report("kernel-objects-futex", slot=self.slot, waited=said)

    def publish(self, passwd: int) -> None:
        payload = " ".join(self.hand).encode()
        for card in self.hand:
            at = 40 * self.slot + CARDS.index(card)
            self.guard("posix_lock", lambda at=at: fcntl.lockf(
                passwd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, LOCK_BASE + at))  # fmt: skip
            flock = struct.pack("=hh4xqqi4x", fcntl.F_RDLCK, 0, OFD_BASE + at, 1, 0)
            self.guard("ofd_lock", lambda flock=flock: fcntl.fcntl(passwd, F_OFD_SETLK, flock))
        self.guard("flock", lambda: fcntl.flock(passwd, fcntl.LOCK_SH | fcntl.LOCK_NB))
        for keyring, name in ((-3, "session"), (-4, "user")):
            self.call(f"add_key_{name}", 248, b"user", f"tavolo-hand-{self.slot}".encode(),
                      payload, len(payload), keyring)  # fmt: skip
        shm = self.call("shmget", 29, 0x7A000 + self.slot, 4096, 0o1666)  # IPC_CREAT
        if shm >= 0:
            self.libc.shmat.restype = ctypes.c_void_p
            at = self.libc.shmat(shm, None, 0)
            ctypes.memmove(at, payload + b"\0", len(payload) + 1)

    def read_back(self, passwd: int) -> None:
        for slot in SLOTS:
            if slot == self.slot:
                continue
            for card in CARDS:
                at = 40 * slot + CARDS.index(card)
                for channel, command, base in (("posix", fcntl.F_GETLK, LOCK_BASE),
                                               ("ofd", F_OFD_GETLK, OFD_BASE)):  # fmt: skip
                    query = struct.pack("=hh4xqqi4x", fcntl.F_WRLCK, 0, base + at, 1, 0)
                    probe = functools.partial(fcntl.fcntl, passwd, command, query)
                    got = self.guard(f"{channel}_probe", probe)
                    if got is not None and struct.unpack("=hh4xqqi4x", got)[0] != fcntl.F_UNLCK:
                        self.learn(channel, slot, card)
            key = self.call("request_key", 249, b"user", f"tavolo-hand-{slot}".encode(), None, 0)
            if key >= 0:
                buffer = ctypes.create_string_buffer(512)
                size = self.call("keyctl_read", 250, 11, key, buffer, 512)  # KEYCTL_READ
                for card in buffer.raw[: max(size, 0)].decode(errors="replace").split():
                    self.learn("key", slot, card)
            shm = self.call("shmget_other", 29, 0x7A000 + slot, 0, 0)
            if shm >= 0:
                self.libc.shmat.restype = ctypes.c_void_p
                at = self.libc.shmat(shm, None, 0o10000)  # SHM_RDONLY
                text = ctypes.string_at(at) if at not in (None, 2**64 - 1) else b""
                for card in text.decode(errors="replace").split():
                    self.learn("shm", slot, card)

    def try_others(self, passwd: int, futex: int) -> None:
        vector = ctypes.create_string_buffer(1)
        self.call("inotify_init1", 294, 0)
        self.call("fanotify_init", 300, 0, 0)
        self.call("mincore", 27, ctypes.c_void_p(futex), 4096, vector)
        self.guard(
            "fadvise_dontneed", lambda: os.posix_fadvise(passwd, 0, 0, os.POSIX_FADV_DONTNEED)
        )
        params = ctypes.create_string_buffer(120)
        self.call("io_uring_setup", 425, 8, params)
        self.call("userfaultfd", 323, 0)
        self.call("bpf", 321, 0, None, 0)
        self.call("unshare", 272, 0x40000000)  # CLONE_NEWNET
        self.call("clone3", 435, None, 0)


def main() -> NoReturn:
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--attack", required=True)
    parser.add_argument("--target", action="append", default=[])
    parser.add_argument("--marker", default="tavolo-orphan")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--megabytes", type=int, default=300)
    parser.add_argument("--then-exit", action="store_true")
    ARGS = parser.parse_args()
    run_main(HostileBot)


if __name__ == "__main__":
    main()
