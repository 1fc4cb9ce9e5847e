"""One process at a time opens a SQLite store: workers started together must not race on its schema.

MLflow and Optuna create their tables when a store is first opened. Two processes opening the same
fresh ``.db`` file at once both see no tables and both run the creation, and the slower one fails
(or leaves the file half-migrated). :func:`sqlite_open_lock` holds an exclusive ``flock`` on a
``<file>.lock`` beside the database while the caller opens it; URLs that are not SQLite files pass
through without a lock.

>>> import tempfile
>>> url = f"sqlite:///{tempfile.mkdtemp()}/x.db"
>>> with sqlite_open_lock(url) as path:
...     path.endswith("x.db")
True
>>> sqlite_file("postgresql+psycopg://u@h/db") is None, sqlite_file("sqlite:///:memory:") is None
(True, True)
"""

from __future__ import annotations

import contextlib
import os


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


@contextlib.contextmanager
def sqlite_open_lock(url: str):
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
