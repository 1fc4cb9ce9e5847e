"""One change of a registered model's versions and aliases at a time (a promotion by the gate, a
registration by a tuning job), across processes and machines sharing a registry.

MLflow's registry has no compare-and-set for aliases, but creating a registered model is atomic in every
backend (a unique name): the lock is a registered model ``<name>.registry-lock``, created on entry and
deleted on exit. While it exists it is visible in the registry, its description naming its holder (host
and process id). A lock whose holder was a process of this host that no longer exists (killed) is broken
at once; one held from another host is broken when older than ``stale_after`` seconds.
"""

from __future__ import annotations

import os
import socket
import time
from contextlib import contextmanager

LOCK_SUFFIX = ".registry-lock"


class RegistryBusy(RuntimeError):
    """Another promotion or registration of the same model held the lock for longer than the wait allowed."""


def lock_name(name: str) -> str:
    """The registered model that stands for the lock of ``name``.

    >>> lock_name("fairops-german")
    'fairops-german.registry-lock'
    """
    return f"{name}{LOCK_SUFFIX}"


_HOLDER = "registry change in progress: {host} pid {pid}"


def holder_gone(description: str | None, host: str | None = None) -> bool:
    """Whether a lock's description names a process of this host that has ended.

    >>> holder_gone(_HOLDER.format(host="h", pid=os.getpid()), host="h")
    False
    >>> holder_gone(_HOLDER.format(host="elsewhere", pid=1), host="h"), holder_gone(None)
    (False, False)
    """
    host = host or socket.gethostname()
    prefix = _HOLDER.format(host=host, pid="")
    if not description or not description.startswith(prefix) or not description[len(prefix):].isdigit():
        return False
    try:
        os.kill(int(description[len(prefix):]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists under another user
        return False
    return False


def _try_create(client, name: str) -> bool:
    from mlflow.exceptions import MlflowException

    holder = _HOLDER.format(host=socket.gethostname(), pid=os.getpid())
    try:
        client.create_registered_model(name, description=holder)
        return True
    except MlflowException as error:
        if "RESOURCE_ALREADY_EXISTS" in str(error.error_code) or "already exists" in str(error).lower():
            return False
        raise


def _break_if_stale(client, name: str, stale_after: float) -> None:
    from mlflow.exceptions import MlflowException

    try:
        lock = client.get_registered_model(name)
        if time.time() - lock.creation_timestamp / 1000.0 > stale_after or holder_gone(lock.description):
            client.delete_registered_model(name)
    except MlflowException:
        pass  # released meanwhile


@contextmanager
def registry_lock(client, name: str, *, wait: float = 600.0, stale_after: float = 1800.0, poll: float = 0.25):
    """Hold the registry lock of registered model ``name`` for the ``with`` block."""
    lock = lock_name(name)
    deadline = time.monotonic() + wait
    while not _try_create(client, lock):
        _break_if_stale(client, lock, stale_after)
        if time.monotonic() > deadline:
            raise RegistryBusy(f"another promotion or registration of {name!r} holds {lock!r}; waited {wait:g} s")
        time.sleep(poll)
    try:
        yield
    finally:
        client.delete_registered_model(lock)
