"""What an address says about who can reach it: its host, and whether only this machine can (the server's policy of
TLS and tokens beyond loopback, ``arena connect`` and the botkit's refusal to send a bot's token in plain text)."""

from __future__ import annotations

import ipaddress


def host_of(address: str) -> str:
    """The host part of ``HOST:PORT``, ``[V6]:PORT``; ``unix:...`` addresses have none (empty)."""
    if address.startswith("unix:") or address.startswith("unix-abstract:"):
        return ""
    if address.startswith("["):
        return address[1:address.find("]")] if "]" in address else address
    return address.rsplit(":", 1)[0] if ":" in address else address


def is_loopback(address: str) -> bool:
    """Whether only this machine can reach ``address``: a Unix socket, localhost, 127.0.0.0/8 or ::1."""
    host = host_of(address)
    if host == "" and address.startswith("unix"):
        return True
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost, or an empty host (every interface)
