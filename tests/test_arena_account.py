"""The arena's pages behind a sign-in, served over TLS by a real ``tavolo arena serve`` and
attacked for real over HTTP: the cookies (``__Host-``, ``Secure``, ``HttpOnly``,
``SameSite=Strict``), CSRF on every form, POSTs from another origin, an entrant reading only
its own logs (escaped: a log is a stranger's text), the admin page for the organiser alone,
an upload too big, signing out."""

from __future__ import annotations

import datetime as dt
import os
import re
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from referee.sandbox.probe import sandbox_problem
from tests.test_arena_ladder import ARENA as LADDER_ARENA
from tests.test_arena_ladder import ready
from tournaments.arena.archives import ArchiveLimits, pack
from tournaments.arena.sessions import SESSION_HOURS
from tournaments.arena.store import ArenaStore, State

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=str(sandbox_problem()))
TAVOLO = Path(sys.executable).with_name("tavolo")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
ARCHIVE_BYTES = 100_000
ARENA = LADDER_ARENA + f"archive_bytes = {ARCHIVE_BYTES}\n"
HOSTILE_LOG = "<script>alert('owned')</script> SECRET-ALICE-LOG"


def make_certificate(folder: Path) -> ssl.SSLContext:
    """A self-signed certificate for 127.0.0.1 in ``folder``, and a context trusting it."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    return ssl.create_default_context(cafile=str(folder / "cert.pem"))


def start_serve(
    folder: Path, *, tls: bool, extra: list[str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """``tavolo arena serve`` on ``folder/arena.toml`` and ``folder/arena.db`` (and ``extra``
    arguments), and its URL."""
    argv = [str(TAVOLO), "arena", "serve", str(folder / "arena.toml"),
            "--db", str(folder / "arena.db"), "--listen", "127.0.0.1:0"]  # fmt: skip
    argv += extra or []
    if tls:
        argv += ["--tls-cert", str(folder / "cert.pem"), "--tls-key", str(folder / "key.pem")]
    serve = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV
    )
    assert serve.stdout is not None
    line = serve.stdout.readline()
    assert line.startswith("arena "), serve.stderr.read() if serve.stderr else line
    return serve, line.split()[-1]


def organiser_token(db: Path) -> str:
    out = subprocess.run(
        [str(TAVOLO), "arena", "admin", "--db", str(db)],
        check=True, capture_output=True, text=True, env=ENV,
    )  # fmt: skip
    return out.stdout.split()[-1]


class Site:
    def __init__(self, url: str, trust: ssl.SSLContext, folder: Path) -> None:
        self.url, self.trust, self.folder = url, trust, folder
        self.tokens: dict[str, str] = {}
        self.submissions: dict[str, int] = {}

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=self.trust, timeout=30)

    def signed_in(self, who: str) -> tuple[httpx.Client, str]:
        """A client signed in as ``who``, through the form, and its session's CSRF token."""
        http = self.client()
        csrf = form_token(http.get("/signin"))
        answer = http.post("/signin", data={"csrf": csrf, "token": self.tokens[who]})
        assert answer.status_code == 303, answer.text
        page = http.get(answer.headers["location"])
        assert page.status_code == 200
        return http, form_token(page)


def form_token(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("arena-account")
    (tmp / "arena.toml").write_text(ARENA, encoding="utf-8")
    trust = make_certificate(tmp)
    store = ArenaStore(tmp / "arena.db")
    tokens, numbers = {}, {}
    for name in ("alice", "bob"):
        entrant, tokens[name] = store.invite(name)
        numbers[name] = ready(store, entrant, tmp / name, "random")
    # Alice's submission failed, with a log written by her bot: a stranger's text.
    store.set_state(numbers["alice"], State.FAILED, "<b>build failed</b> SECRET-ALICE-REASON")
    store.write_log(numbers["alice"], "build", HOSTILE_LOG)
    store.close()
    tokens["organiser"] = organiser_token(tmp / "arena.db")
    serve, url = start_serve(tmp, tls=True)
    try:
        out = Site(url, trust, tmp)
        out.tokens, out.submissions = tokens, numbers
        yield out
    finally:
        serve.terminate()
        serve.wait(15)


def cookie_attributes(answer: httpx.Response, name: str) -> set[str]:
    for header in answer.headers.get_list("set-cookie"):
        if header.startswith(name + "="):
            return {part.strip().lower() for part in header.split(";")[1:]}
    raise AssertionError(f"no {name} cookie in {answer.headers.get_list('set-cookie')}")


def test_signing_in_sets_host_only_secure_http_only_strict_cookies(site: Site) -> None:
    with site.client() as http:
        form = http.get("/signin")
        assert form.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in form.headers["content-security-policy"]
        signin = cookie_attributes(form, "__Host-tavolo_signin")
        assert {"secure", "httponly", "samesite=strict", "path=/"} <= signin
        answer = http.post("/signin", data={"csrf": form_token(form), "token": site.tokens["bob"]})
        assert answer.status_code == 303 and answer.headers["location"] == "/account"
        session = cookie_attributes(answer, "__Host-tavolo_session")
        assert {"secure", "httponly", "samesite=strict", "path=/"} <= session
        assert f"max-age={SESSION_HOURS * 3600}" in session
        assert not any(a.startswith("domain") for a in session)
        page = http.get("/account")
        assert page.status_code == 200 and "bob: your submissions" in page.text
        assert page.headers["cache-control"] == "no-store"


def test_a_sign_in_is_refused_without_its_form_token_from_elsewhere_or_with_a_bad_token(
    site: Site,
) -> None:
    token = site.tokens["bob"]
    with site.client() as http:
        # A forged form: no sign-in cookie of this browser's.
        forged = http.post("/signin", data={"csrf": "x" * 43, "token": token})
        assert forged.status_code == 403 and "expired" in forged.text
        assert "tavolo_session" not in forged.headers.get("set-cookie", "")
        csrf = form_token(http.get("/signin"))
        other = http.post("/signin", data={"csrf": "y" * 43, "token": token})
        assert other.status_code == 403
        csrf = form_token(http.get("/signin"))
        elsewhere = http.post(
            "/signin", data={"csrf": csrf, "token": token},
            headers={"Origin": "https://evil.example"},
        )  # fmt: skip
        assert elsewhere.status_code == 403 and "another site" in elsewhere.text
        wrong = http.post("/signin", data={"csrf": csrf, "token": "tav_" + "A" * 43})
        assert wrong.status_code == 401 and "not valid" in wrong.text
        assert http.get("/account").headers["location"] == "/signin"


def test_an_entrant_reads_its_own_logs_escaped_and_no_one_elses(site: Site) -> None:
    alice, alice_csrf = site.signed_in("alice")
    bob, bob_csrf = site.signed_in("bob")
    with closing(alice), closing(bob):
        own = alice.get("/account").text
        assert "SECRET-ALICE-LOG" in own and "SECRET-ALICE-REASON" in own
        assert "<script>alert" not in own and "&lt;script&gt;alert" in own
        assert "<b>build failed</b>" not in own and "&lt;b&gt;build failed" in own
        theirs = bob.get("/account").text
        assert "SECRET-ALICE" not in theirs
        public = bob.get(f"/submissions/{site.submissions['alice']}").text
        assert "SECRET-ALICE" not in public
        # Bob cannot make Alice's submission anyone's finalist, with his own form token.
        chosen = bob.post(f"/account/choose/{site.submissions['alice']}", data={"csrf": bob_csrf})
        assert chosen.status_code == 404 and "no submission" in chosen.text
        # Nor read her logs through the API with his token.
        api = bob.get(
            f"/api/v1/submissions/{site.submissions['alice']}/logs",
            headers={"Authorization": f"Bearer {site.tokens['bob']}"},
        )
        assert api.status_code == 404 and "SECRET-ALICE" not in api.text
        assert alice_csrf != bob_csrf


def test_every_form_needs_its_sessions_csrf_token_and_this_origin(site: Site) -> None:
    alice, alice_csrf = site.signed_in("alice")
    bob, bob_csrf = site.signed_in("bob")
    archive = pack_bot(site.folder / "csrf-bot")
    with closing(alice), closing(bob):
        for data in ({}, {"csrf": bob_csrf}, {"csrf": ""}):
            answer = alice.post(
                "/account/submissions", data=data, files={"archive": ("bot.tar.gz", archive)}
            )
            assert answer.status_code == 403 and "CSRF" in answer.text, data
        elsewhere = alice.post(
            "/account/submissions", data={"csrf": alice_csrf},
            files={"archive": ("bot.tar.gz", archive)}, headers={"Origin": "http://evil.example"},
        )  # fmt: skip
        assert elsewhere.status_code == 403
        for path in ("/signout", f"/account/choose/{site.submissions['bob']}"):
            assert bob.post(path, data={"csrf": alice_csrf}).status_code == 403
        # Nothing was submitted by any of them.
        listed = alice.get(
            "/api/v1/submissions", headers={"Authorization": f"Bearer {site.tokens['alice']}"}
        )
        assert [s["id"] for s in listed.json()] == [site.submissions["alice"]]
    with site.client() as stranger:
        answer = stranger.post("/account/submissions", data={"csrf": alice_csrf})
        assert answer.status_code == 303 and answer.headers["location"] == "/signin"


def pack_bot(folder: Path, padding: int = 0) -> bytes:
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "bot"\ncommand = ["{sys.executable}", "-m", "tavolo_bot.bots.random"]\n'
    )
    if padding:
        (folder / "padding.bin").write_bytes(os.urandom(padding))
    return pack(folder)


def test_an_upload_from_the_page_is_kept_and_one_too_big_refused(site: Site) -> None:
    carol_store = ArenaStore(site.folder / "arena.db")
    try:
        _, site.tokens["carol"] = carol_store.invite("carol")
    finally:
        carol_store.close()
    carol, csrf = site.signed_in("carol")
    with closing(carol):
        big = pack_bot(site.folder / "big-bot", padding=ARCHIVE_BYTES * 2)
        refused = carol.post(
            "/account/submissions", data={"csrf": csrf}, files={"archive": ("b.tar.gz", big)}
        )
        assert refused.status_code == 413
        archive = pack_bot(site.folder / "carol-bot")
        sent = carol.post(
            "/account/submissions", data={"csrf": csrf},
            files={"archive": ("bot.tar.gz", archive)},
        )  # fmt: skip
        assert sent.status_code == 303, sent.text
        number = int(sent.headers["location"].rpartition("=")[2])
        page = carol.get(sent.headers["location"])
        assert f"Submission {number} received" in page.text
        assert f'data-submission="{number}"' in page.text
        again = carol.post(
            "/account/submissions", data={"csrf": csrf},
            files={"archive": ("bot.tar.gz", archive)},
        )  # fmt: skip
        assert again.headers["location"] == f"/account?same={number}"
        mine = carol.get(
            "/api/v1/submissions", headers={"Authorization": f"Bearer {site.tokens['carol']}"}
        )
        assert [s["id"] for s in mine.json()] == [number]


def test_the_admin_page_is_the_organisers_alone(site: Site) -> None:
    bob, bob_csrf = site.signed_in("bob")
    with closing(bob):
        assert bob.get("/admin").headers["location"] == "/signin"
        refused = bob.post(
            f"/admin/disable/{site.submissions['bob']}", data={"csrf": bob_csrf, "reason": "x"}
        )
        assert refused.status_code == 403 and "organiser" in refused.text
    admin, csrf = site.signed_in("organiser")
    with closing(admin):
        page = admin.get("/admin").text
        for table in ("workers", "queue", "entrants", "faults", "failed", "submissions"):
            assert f'id="{table}"' in page
        assert 'data-entrant="alice"' in page and 'data-entrant="bob"' in page
        # A failure's reason is shown to the organiser, escaped.
        assert "SECRET-ALICE-REASON" in page and "<b>build failed" not in page
        number = site.submissions["bob"]
        forged = admin.post(f"/admin/disable/{number}", data={"reason": "cheating"})
        assert forged.status_code == 403
        empty = admin.post(f"/admin/disable/{number}", data={"csrf": csrf, "reason": " "})
        assert empty.status_code == 400 and "reason is empty" in empty.text
        done = admin.post(
            f"/admin/disable/{number}", data={"csrf": csrf, "reason": "<i>cheating</i>"}
        )
        assert done.status_code == 303
        after = admin.get(done.headers["location"]).text
        assert f"Submission {number} is disabled" in after and "&lt;i&gt;cheating" in after
        public = admin.get(f"/submissions/{number}").text
        assert 'id="state">disabled<' in public


def test_signing_out_ends_the_session_for_good(site: Site) -> None:
    alice, csrf = site.signed_in("alice")
    with closing(alice):
        cookie = alice.cookies.get("__Host-tavolo_session")
        assert cookie
        out = alice.post("/signout", data={"csrf": csrf})
        assert out.status_code == 303
    # The old cookie, replayed by anyone, opens nothing.
    with site.client() as replay:
        replay.cookies.set("__Host-tavolo_session", cookie)
        assert replay.get("/account").headers["location"] == "/signin"


def test_a_session_expires(tmp_path: Path) -> None:
    store = ArenaStore(tmp_path / "arena.db")
    try:
        entrant, _ = store.invite("alice")
        now = dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)
        cookie, session = store.sessions.open(entrant.id, False, now)
        assert store.sessions.find(cookie, now + dt.timedelta(hours=SESSION_HOURS - 1)) == session
        assert store.sessions.find(cookie, now + dt.timedelta(hours=SESSION_HOURS)) is None
        # Forgotten once expired, whatever the clock says afterwards.
        assert store.sessions.find(cookie, now) is None
        assert store.sessions.find("x" * 43, now) is None
    finally:
        store.close()


def test_without_tls_the_cookies_are_not_secure_but_still_http_only(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(ARENA, encoding="utf-8")
    store = ArenaStore(tmp_path / "arena.db")
    _, token = store.invite("alice")
    sub, _ = store.submit(
        store.entrants()[0], pack_bot(tmp_path / "b"), limits=ArchiveLimits(), per_day=9
    )
    store.set_state(sub.id, State.FAILED, "no")
    store.close()
    serve, url = start_serve(tmp_path, tls=False)
    try:
        with httpx.Client(base_url=url, timeout=30) as http:
            form = http.get("/signin")
            answer = http.post("/signin", data={"csrf": form_token(form), "token": token})
            attributes = cookie_attributes(answer, "tavolo_session")
            assert "httponly" in attributes and "secure" not in attributes
            deadline = time.monotonic() + 10
            while http.get("/account").status_code != 200:
                assert time.monotonic() < deadline
    finally:
        serve.terminate()
        serve.wait(15)
