"""One process at a time opens a database store: workers started together must not race on its schema.

MLflow and Optuna create their tables when a store is first opened. Two processes opening the same
fresh store at once both see no tables and both run the creation, and the slower one fails (SQLite: a
half-migrated file; PostgreSQL: ``duplicate key value violates unique constraint
"pg_type_typname_nsp_index"`` on ``CREATE TABLE alembic_version``, seen with three ``fairops tune``
workers started together on an empty database). :func:`store_open_lock` serialises the opening:

- a SQLite file: an exclusive ``flock`` on a ``<file>.lock`` beside the database;
- a PostgreSQL database: a session-level advisory lock (``pg_advisory_lock``) held on a connection of
  its own, so it ends with that connection even if the process dies;
- anything else (an MLflow server over HTTP, a journal file, a gRPC proxy) passes through unlocked.

>>> import tempfile
>>> url = f"sqlite:///{tempfile.mkdtemp()}/x.db"
>>> with store_open_lock(url) as path:
...     path.endswith("x.db")
True
>>> sqlite_file("postgresql+psycopg://u@h/db") is None, sqlite_file("sqlite:///:memory:") is None
(True, True)
"""

from __future__ import annotations

import contextlib
import os
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

#: The advisory lock's key: any 64-bit number other programs on the database are unlikely to pick.
POSTGRES_LOCK_KEY = zlib.crc32(b"fairops: open a store") + (1 << 40)


def sqlite_file(url: str) -> str | None:
    """The database file of a ``sqlite:///`` (or ``sqlite+driver:///``) URL; None for anything else.

    >>> sqlite_file("sqlite:////tmp/p/mlflow.db"), sqlite_file("sqlite:///rel.db?timeout=5")
    ('/tmp/p/mlflow.db', 'rel.db')
    """
    if not isinstance(url, str):
        return None
    scheme, sep, rest = url.partition(":///")
    if not sep or scheme.split("+")[0] != "sqlite":
        return None
    path = rest.split("?")[0]
    return None if path in ("", ":memory:") else path


def is_postgres(url: str) -> bool:
    """Whether ``url`` names a PostgreSQL database (``postgresql://``, ``postgresql+driver://``, ``postgres://``).

    >>> is_postgres("postgresql+psycopg://u:p@h/db"), is_postgres("sqlite:///x.db"), is_postgres(None)
    (True, False, False)
    """
    return isinstance(url, str) and url.split("://")[0].split("+")[0] in ("postgresql", "postgres")


@contextlib.contextmanager
def store_open_lock(url: str) -> Iterator[str | None]:
    """Hold an exclusive lock on the store of ``url`` while the caller opens it (see the module docstring).

    Yields the SQLite file's path (its folder is created), or None for a store that is not a SQLite file.
    A PostgreSQL server that cannot be reached is not an error here: the caller's own open reports it.
    """
    if is_postgres(url):
        with _postgres_advisory_lock(url):
            yield None
        return
    with sqlite_open_lock(url) as path:
        yield path


@contextlib.contextmanager
def sqlite_open_lock(url: str) -> Iterator[str | None]:
    """Hold an exclusive lock for the SQLite file of ``url`` (its folder is created); yields the file path.

    Non-SQLite URLs yield None without locking. Platforms without ``fcntl`` do not lock.
    """
    path = sqlite_file(url)
    if path is None:
        yield None
        return
    try:
        import fcntl
    except ImportError:  # not a POSIX system: nothing to lock with
        yield path
        return
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.abspath(path) + ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield path
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def _postgres_advisory_lock(url: str) -> Iterator[None]:
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    engine = sqlalchemy.create_engine(url.replace("postgres://", "postgresql://", 1), poolclass=NullPool)
    try:
        connection = engine.connect()
    except Exception:  # noqa: BLE001 - unreachable or refused: the caller's open says why, in its words
        engine.dispose()
        yield
        return
    try:
        connection.execute(sqlalchemy.text("SELECT pg_advisory_lock(:key)"), {"key": POSTGRES_LOCK_KEY})
        yield
    finally:
        try:
            connection.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:key)"), {"key": POSTGRES_LOCK_KEY})
        finally:
            connection.close()
            engine.dispose()
