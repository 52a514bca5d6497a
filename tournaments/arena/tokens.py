"""Entrants' tokens and invitation codes: made once, shown once, kept only as digests.

A token is 256 random bits, so a plain SHA-256 is a safe digest of it (there is nothing to
guess by brute force that a slow hash would protect). Lookups are by digest, and the
digest found is compared again in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_PREFIX = "tav_"
"""Every token starts so, which secret scanners and readers recognise."""


def new_token() -> str:
    """A fresh token: shown to its entrant once, never stored."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def digest(token: str) -> str:
    """What the arena keeps of a token or an invitation code."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_digest(token: str, kept: str) -> bool:
    """Whether ``token`` is the one ``kept`` is the digest of, in constant time."""
    return hmac.compare_digest(digest(token), kept)


def well_formed(token: str) -> bool:
    """Whether ``token`` could be a token at all (checked before any lookup)."""
    body = token[len(TOKEN_PREFIX) :]
    return (
        token.startswith(TOKEN_PREFIX)
        and 32 <= len(body) <= 64
        and all(c.isascii() and (c.isalnum() or c in "-_") for c in body)
    )
