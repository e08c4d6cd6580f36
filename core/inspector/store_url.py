"""Store locations as the window remembers them (STORE-1, #8): paths and server URLs.

A server URL may carry a password (``postgresql+psycopg://me:secret@db/ctxlens``). The
window never writes one to its settings: recent stores keep the URL without the password,
and reopening one asks for it again (``with_password``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.errors import InvalidInputError

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

_PASSWORD = re.compile(r"^([^:/@]+://[^:/@]*):[^@]*@")


def is_server_url(target: str) -> bool:
    """A database URL other than SQLite (needs a server and maybe a password)."""
    return "://" in target and not target.startswith("sqlite")


def _parse(target: str) -> URL:
    """The URL SQLAlchemy reads from ``target``, or ``InvalidInputError``. SQLAlchemy loads
    only here, for a server URL: the window remembers file paths without it (cold start)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(target)
    except ArgumentError as exc:
        shown = _PASSWORD.sub(r"\1@", target)
        raise InvalidInputError(f"{shown}: not a database URL ({exc})") from None


def has_password(target: str) -> bool:
    if not is_server_url(target):
        return False
    try:
        return bool(_parse(target).password)
    except InvalidInputError:
        return bool(_PASSWORD.match(target))


def strip_password(target: str) -> str:
    """The same location without its password (what may be stored and shown)."""
    if not is_server_url(target):
        return target
    try:
        url = _parse(target)
    except InvalidInputError:
        return _PASSWORD.sub(r"\1@", target)
    return url._replace(password=None).render_as_string(hide_password=False)


def with_password(target: str, password: str) -> str:
    """``target`` with ``password`` set (quoted as URLs need); unchanged when empty."""
    if not password or not is_server_url(target):
        return target
    return _parse(target).set(password=password).render_as_string(hide_password=False)
