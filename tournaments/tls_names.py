"""Whether a referee's TLS certificate names the address its bots are told to connect to."""

from __future__ import annotations

import ipaddress

from cryptography import x509


class CertificateError(ValueError):
    """The certificate cannot be read; one line saying why."""


def certificate_names(pem: bytes) -> list[str]:
    """The subjectAltName entries of the first certificate of ``pem``, as ``DNS:name`` and
    ``IP:address``; CertificateError if it is no PEM certificate."""
    try:
        cert = x509.load_pem_x509_certificate(pem)
    except ValueError as exc:
        raise CertificateError(f"not a PEM certificate ({exc})") from None
    try:
        extension = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return []
    names = extension.value
    found = [f"DNS:{n}" for n in names.get_values_for_type(x509.DNSName)]
    found += [f"IP:{n}" for n in names.get_values_for_type(x509.IPAddress)]
    return found


def names_host(names: list[str], host: str) -> bool:
    """Whether a certificate with ``names`` is valid for ``host`` (a DNS name or an IP
    address), as gRPC's TLS checks it: an exact name, or a ``*.`` wildcard for one label."""
    host = host.strip("[]")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for name in names:
        kind, _, value = name.partition(":")
        if ip is not None:
            if kind == "IP" and ipaddress.ip_address(value) == ip:
                return True
            continue
        if kind != "DNS":
            continue
        wanted, given = host.lower().rstrip("."), value.lower().rstrip(".")
        wildcard = given.startswith("*.") and "." in wanted
        if wanted == given or (wildcard and wanted.split(".", 1)[1] == given[2:]):
            return True
    return False


def tls_name_warning(pem: bytes, host: str, where: str) -> str | None:
    """One line if the certificate ``pem`` (from ``where``) does not name ``host``, the
    host bots are told to connect to; None if it does."""
    try:
        names = certificate_names(pem)
    except CertificateError as exc:
        return f"{where}: {exc}"
    if names_host(names, host):
        return None
    named = ", ".join(names) if names else "no address (it has no subjectAltName)"
    return (
        f"the TLS certificate {where} names {named}, not {host}, the address bots are told: "
        "their TLS will refuse it; make one that names it (docs/organising.md, "
        "'A certificate')"
    )
