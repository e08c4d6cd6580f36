"""Store URLs the window remembers: passwords are stripped and given back only on request."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from core.errors import InvalidInputError
from core.inspector.store_url import has_password, is_server_url, strip_password, with_password

URL = "postgresql+psycopg://me:s%40cret@db.example:5432/ctxlens?sslmode=require"


def test_strip_keeps_everything_but_the_password() -> None:
    bare = strip_password(URL)
    assert "cret" not in bare and has_password(URL) and not has_password(bare)
    a, b = make_url(URL), make_url(bare)
    assert (b.username, b.host, b.port, b.database, dict(b.query)) == (
        a.username,
        a.host,
        a.port,
        a.database,
        dict(a.query),
    )


def test_password_with_url_characters_survives_the_round_trip() -> None:
    secret = "p@ss:w/rd?#%"
    full = with_password(strip_password(URL), secret)
    assert make_url(full).password == secret
    assert strip_password(full) == strip_password(URL)
    assert with_password(URL, "") == URL, "no password given: the URL is unchanged"


def test_paths_and_sqlite_urls_are_left_alone() -> None:
    for target in ("/tmp/store.db", "sqlite:////tmp/store.db", "relative.db"):
        assert not is_server_url(target)
        assert strip_password(target) == target and not has_password(target)
        assert with_password(target, "x") == target


def test_an_unparsable_url_still_loses_its_password() -> None:
    odd = "not a url://me:hunter2@host"
    assert strip_password(odd) == "not a url://me@host"
    with pytest.raises(InvalidInputError, match="not a database URL"):
        with_password("not a url://me@host", "x")
