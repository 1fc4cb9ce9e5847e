"""``grpc://host:port`` storages: Optuna's gRPC storage proxy, with heartbeats carried through it.

Optuna's :class:`~optuna.storages.GrpcStorageProxy` forwards every storage call to the server started by
:func:`optuna.storages.run_grpc_proxy_server` except heartbeats: it has no heartbeat call, so on a plain
proxy a killed worker's trial stays RUNNING for good and every worker waiting at its rung waits until
its ``wait_timeout``. :class:`HeartbeatGrpcStorage` gives the proxy the heartbeats fairops relies on,
using only calls the proxy forwards: a beat writes the trial's system attribute ``fairops:heartbeat``,
and a trial is stale once this process has seen that attribute unchanged for ``grace_period`` seconds.
Staleness is judged on this process' own monotonic clock, never by comparing clocks of two machines.
Each beat is one round trip, so two are left out: a trial's first beat (observers time a trial's silence
from when they first see it, so a first beat tells them nothing) and a beat moments after the last one
(the Fairband sampler beats when it claims a slot, Optuna's heartbeat thread right after). A fit shorter
than the heartbeat interval then makes no heartbeat write at all.
Optuna's heartbeat thread, :func:`optuna.storages.fail_stale_trials` and the Fairband sampler then
work on it as on an RDB storage with ``heartbeat_interval``.

Optuna offers no public base class for storages with heartbeats: ``BaseHeartbeat`` and the storage id of a
trial read back come from :mod:`fairops.fairband._optuna_internals`, the one module that reaches Optuna's
internals.
"""

from __future__ import annotations

import threading
import time
from urllib.parse import urlsplit

from optuna.exceptions import UpdateFinishedTrialError
from optuna.storages import GrpcStorageProxy
from optuna.trial import TrialState

from ..errors import InputError
from ..fairband._optuna_internals import BaseHeartbeat, stored_trial_id

SCHEME = "grpc"
BEAT_ATTR = "fairops:heartbeat"


def parse_grpc_url(url: str) -> tuple[str, int]:
    """``(host, port)`` of a ``grpc://host:port`` URL.

    >>> parse_grpc_url("grpc://10.0.0.5:13000")
    ('10.0.0.5', 13000)
    >>> parse_grpc_url("grpc://proxy")
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: storage must look like grpc://host:port, got 'grpc://proxy' (no port)
    """
    parts = urlsplit(url)
    if parts.scheme != SCHEME or not parts.hostname:
        raise InputError(f"storage must look like grpc://host:port, got {url!r}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        raise InputError(f"storage must look like grpc://host:port, got {url!r} (no port)")
    if parts.path not in ("", "/") or parts.query or parts.username:
        raise InputError(f"storage must look like grpc://host:port with nothing else, got {url!r}")
    return parts.hostname, port


class HeartbeatGrpcStorage(GrpcStorageProxy, BaseHeartbeat):
    """A :class:`~optuna.storages.GrpcStorageProxy` whose trials have heartbeats (see the module's text).

    ``heartbeat_interval``: seconds between beats; ``grace_period``: how long a running trial's beat may
    stay unchanged before this process fails it; ``heartbeat_stale_trial_callback(study, trial)``: called
    for each trial failed so, as with :class:`~optuna.storages.RDBStorage`.
    """

    def __init__(self, *, host: str = "localhost", port: int = 13000, heartbeat_interval: int = 10,
                 grace_period: int | None = None, heartbeat_stale_trial_callback=None) -> None:
        if heartbeat_interval <= 0:
            raise InputError(f"heartbeat_interval must be positive, got {heartbeat_interval!r}")
        grace_period = 2 * heartbeat_interval if grace_period is None else grace_period
        if grace_period <= heartbeat_interval:
            raise InputError(f"grace_period must exceed heartbeat_interval ({heartbeat_interval}), "
                             f"got {grace_period!r}")
        super().__init__(host=host, port=port)
        self.heartbeat_interval = heartbeat_interval
        self.grace_period = grace_period
        self.heartbeat_stale_trial_callback = heartbeat_stale_trial_callback
        self._beats_lock = threading.Lock()
        self._beats_seen: dict[int, tuple[object, float]] = {}  # trial id -> (last beat seen, since when)
        # A beat within this many seconds of the last one is skipped: the next written beat then follows
        # within heartbeat_interval + this, which stays below grace_period.
        self._beat_window = min(heartbeat_interval, grace_period - heartbeat_interval) / 2
        self._beats_written: dict[int, float] = {}  # trial id -> when this process last beat it

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_beats_lock", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._beats_lock = threading.Lock()
        self._beats_written = {}  # another process has written no beat yet

    def record_heartbeat(self, trial_id: int) -> None:
        now = time.monotonic()
        with self._beats_lock:
            last = self._beats_written.get(trial_id)
            if last is not None and now - last < self._beat_window:
                return
            # forget trials not beaten for a while (finished ones), keeping the map small
            self._beats_written = {t: w for t, w in self._beats_written.items() if now - w < self.grace_period}
            self._beats_written[trial_id] = now
            if last is None:  # the first beat: nothing an observer needs (see the module's text)
                return
        try:
            self.set_trial_system_attr(trial_id, BEAT_ATTR, time.time())
        except UpdateFinishedTrialError:
            pass  # finished (or failed as stale by another worker) between two beats: nothing to keep alive

    def _get_stale_trial_ids(self, study_id: int) -> list[int]:
        running = self.get_all_trials(study_id, deepcopy=False, states=(TrialState.RUNNING,))
        now, stale = time.monotonic(), []
        with self._beats_lock:
            alive = {}
            for trial in running:
                beat, key = trial.system_attrs.get(BEAT_ATTR), stored_trial_id(trial)
                seen = self._beats_seen.get(key)
                if seen is None or seen[0] != beat:
                    seen = (beat, now)  # first look, or it beat since the last one
                elif now - seen[1] > self.grace_period:
                    stale.append(key)
                alive[key] = seen
            self._beats_seen = alive
        return stale

    def get_heartbeat_interval(self) -> int:
        return self.heartbeat_interval

    def get_heartbeat_stale_trial_callback(self):
        return self.heartbeat_stale_trial_callback


def open_grpc_storage(url: str, heartbeat: float, on_stale=None, timeout: float = 60.0) -> HeartbeatGrpcStorage:
    """The storage behind the gRPC proxy at ``url`` (``grpc://host:port``), once the proxy answers.

    Heartbeats every ``heartbeat`` seconds (at least 1); a trial silent for three of them is failed.
    """
    host, port = parse_grpc_url(url)
    interval = max(1, round(heartbeat))
    storage = HeartbeatGrpcStorage(host=host, port=port, heartbeat_interval=interval,
                                   grace_period=max(2, round(3 * heartbeat)), heartbeat_stale_trial_callback=on_stale)
    try:
        storage.wait_server_ready(timeout=timeout)
    except ConnectionError as error:
        storage.close()
        raise InputError(f"no gRPC storage proxy answers at {host}:{port} after {timeout:g} s "
                         "(start one with `fairops grpc-proxy --storage <database URL> --port N`)") from error
    return storage
