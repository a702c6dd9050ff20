"""Errors that become a request's failed answer (docs/tinker.md §3.3): `user` for what the caller can fix (bad
input, a state that does not fit), `server` for what the operator must fix or what went wrong here."""

from __future__ import annotations

from typing import Literal

Category = Literal["user", "server"]


class TinkerError(Exception):
    """A failure whose message is written for the SDK's user (RequestFailedError shows it with the category)."""

    def __init__(self, message: str, category: Category):
        super().__init__(message)
        self.category: Category = category


def user_error(message: str) -> TinkerError:
    return TinkerError(message, "user")


def server_error(message: str) -> TinkerError:
    return TinkerError(message, "server")
