"""Which trial holds which slot of the Fairband schedule: claims, and what a study's trials say about them.

A *slot* is one place of the schedule, numbered from 0 in the order of :func:`schedule.slot_of`
(slot ``k`` of the synchronous schedule is ``schedule.slot_of(k)``). Every trial the sampler prepares
*claims* one slot and records the claim in its system attribute ``fairband:claim``. Claims are made in
trial-number order: a trial claims only once every lower-numbered running trial has claimed (or is
finished), and it takes the lowest slot nobody holds. A slot is held by

- a COMPLETE trial that claimed it, or a FAIL/PRUNED one whose own worker finished it (its objective
  failed or was pruned: that is the fit's result, the same in every run); the sampler records this in
  ``fairband:outcome`` when it finishes the trial;
- a RUNNING trial that claimed it.

A trial failed by someone else (its heartbeat went stale: the worker died) holds nothing, so its slot
is free again and the next trial takes it: nothing a killed worker was doing is lost, and because
claims follow trial numbers, no two live trials ever hold one slot (no storage needs an atomic
compare-and-set: each claim is a function of the claims before it). :class:`SlotClaims` is that protocol,
run for a sampler; :class:`SlotBoard` reads the slots from a study's trials.

>>> import optuna
>>> from fairops.fairband import FairbandSampler
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0))
>>> study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.5), n_trials=3)
>>> board = SlotBoard(study.get_trials(deepcopy=False))
>>> sorted(board.done), board.lowest_free()
([0, 1, 2], 3)

How a trial waits for other trials: pauses between storage reads, its heartbeat, dead workers failed.

The pause doubles from half a millisecond up to a bound, and ends early whenever a trial of this process
claims a slot. With a storage that has heartbeats, the waiting trial keeps beating and fails trials whose
heartbeat went stale, so their slots are redone instead of waited for.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

import optuna
from optuna.trial import FrozenTrial, TrialState

from ..errors import InputError
from . import _optuna_internals as internals, _ranking as ranking, _schedule as schedule
from ._errors import FairbandWaitTimeout
from ._settings import FairbandSettings, check_same_configuration, configuration_hash, record_configuration

CLAIM_ATTR = "fairband:claim"
OUTCOME_ATTR = "fairband:outcome"
HELD, RELEASED, REFUSED = "held", "released", "refused"

#: A finished rung ranked: (the alpha it was ranked with, the fits promoted from it, best first).
Ranking: TypeAlias = tuple[float, list[FrozenTrial]]


@dataclass(frozen=True)
class Claim:
    """What one trial claimed: a ``slot`` (``status`` "held"), or nothing ("released", "refused")."""

    trial: int
    slot: int | None
    status: str
    configuration: str | None = None  # hash of the worker's study configuration
    reason: str | None = None
    worker: str | None = None  # host:pid of the process that claimed

    def record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"trial": self.trial, "slot": self.slot, "status": self.status}
        for name in ("configuration", "reason", "worker"):
            if getattr(self, name) is not None:
                record[name] = getattr(self, name)
        return record


def this_worker() -> str:
    """``host:pid`` of this process, recorded with its claims (which worker holds which slot)."""
    global _worker
    if _worker is None or _worker[0] != os.getpid():  # a forked child is another worker
        _worker = (os.getpid(), f"{socket.gethostname()}:{os.getpid()}")
    return _worker[1]


_worker: tuple[int, str] | None = None


def claim_of(trial: FrozenTrial) -> Claim | None:
    """The trial's own claim; None when it has none (or carries a copy of another trial's, e.g. a retry).

    >>> from optuna.trial import create_trial
    >>> t = create_trial(values=[1.0], system_attrs={CLAIM_ATTR: {"trial": 0, "slot": 4, "status": "held"}})
    >>> t.number = 0
    >>> claim_of(t).slot
    4
    >>> t.number = 9  # a copy of trial 0's record on trial 9 (what a retry callback makes) is not a claim
    >>> claim_of(t) is None
    True
    """
    record = trial.system_attrs.get(CLAIM_ATTR)
    if not isinstance(record, dict) or record.get("trial") != trial.number:
        return None
    return Claim(record["trial"], record.get("slot"), record.get("status", HELD), record.get("configuration"),
                 record.get("reason"), record.get("worker"))


def finished_by_its_worker(trial: FrozenTrial) -> bool:
    """True when a finished trial's state is its fit's result (not a dead worker failed by another).

    >>> from optuna.trial import create_trial
    >>> finished_by_its_worker(create_trial(state=TrialState.FAIL, system_attrs={OUTCOME_ATTR: "FAIL"}))
    True
    """
    if trial.state == TrialState.COMPLETE:
        return True
    return trial.state.is_finished() and trial.system_attrs.get(OUTCOME_ATTR) == trial.state.name


def holds_slot(trial: FrozenTrial) -> int | None:
    """The slot whose result ``trial`` is (finished by its own worker), else None."""
    claim = claim_of(trial)
    if claim is None or claim.status != HELD or not finished_by_its_worker(trial):
        return None
    return claim.slot


def _creator(trial: FrozenTrial) -> str | None:
    # Enqueued or retried trials never hold a slot (the sampler refuses them), so nobody waits for them.
    if "fixed_params" in trial.system_attrs:
        return "study.enqueue_trial"
    if "failed_trial" in trial.system_attrs:
        return "a retry callback"
    return None


def refusal(trial: FrozenTrial) -> str | None:
    """Why the schedule refuses ``trial`` (created by ``enqueue_trial`` or a retry callback), else None."""
    how = _creator(trial)
    if how is None:
        return None
    return (f"trial {trial.number} was created by {how}; the Fairband schedule assigns every configuration "
            "and budget itself (a failed slot is redone by the sampler), so the trial is refused")


class SlotBoard:
    """The state of every slot, read from a study's trials; :meth:`update` takes a fresh read.

    ``done``: slot -> the finished trial holding it; ``running``: slot -> the running trial holding it;
    ``unclaimed``: numbers of running trials that have not claimed yet (the ones later claims wait for);
    ``frontier``: one past the highest slot ever claimed; ``first_configuration``: (number, hash) of the
    lowest-numbered trial that was given a slot (its configuration is the study's).
    Finished trials never change, so they are read once; an update costs one pass over the trial list.
    """

    def __init__(self, trials: Iterable[FrozenTrial] = ()) -> None:
        self.done: dict[int, FrozenTrial] = {}
        self.frontier = 0
        self.first_configuration: tuple[int, str] | None = None
        self._finished: set[int] = set()
        self._settled = 0  # every trial numbered below is finished and read
        self._low = 0  # every slot below is done
        self.update(trials)

    def update(self, trials: Iterable[FrozenTrial]) -> SlotBoard:
        """Read ``trials`` (all of a study's trials, in number order, as ``get_trials`` returns them)."""
        self.running: dict[int, FrozenTrial] = {}
        self.unclaimed: list[int] = []
        trials = list(trials)
        # Trial numbers are 0, 1, 2, ... : skip the finished prefix without touching it.
        start = self._settled if len(trials) >= self._settled and (
            self._settled == 0 or trials[self._settled - 1].number == self._settled - 1) else 0
        for position in range(start, len(trials)):
            t = trials[position]
            number = position if start else t.number
            if number in self._finished:
                continue
            if t.state.is_finished():
                self._finished.add(number)
            self._add(t)
        while self._settled in self._finished:
            self._settled += 1
        self.unclaimed.sort()
        return self

    def _add(self, t: FrozenTrial) -> None:
        claim = claim_of(t)
        if claim is None:
            if t.state == TrialState.RUNNING and _creator(t) is None:
                self.unclaimed.append(t.number)
            return
        if claim.status == REFUSED:
            return
        if claim.configuration is not None and (self.first_configuration is None
                                                or t.number < self.first_configuration[0]):
            self.first_configuration = (t.number, claim.configuration)
        if claim.slot is None or claim.status != HELD:
            return
        self.frontier = max(self.frontier, claim.slot + 1)
        if t.state == TrialState.RUNNING:
            self.running[claim.slot] = t
        elif finished_by_its_worker(t):
            self.done[claim.slot] = t

    def is_free(self, slot: int) -> bool:
        return slot not in self.done and slot not in self.running

    def lowest_free(self) -> int:
        """The slot the next claim takes: the lowest one nobody holds."""
        while self._low in self.done:
            self._low += 1
        slot = self._low
        while slot < self.frontier and not self.is_free(slot):
            slot += 1
        return slot


def slot_of_trial(trial: FrozenTrial) -> int | None:
    """The slot a trial claimed (held or not), or None."""
    claim = claim_of(trial)
    return None if claim is None else claim.slot


def fits_of_run(trials: Iterable[FrozenTrial], n_slots: int) -> list[FrozenTrial]:
    """The finished trial of each of the first ``n_slots`` slots that has one, in slot order.

    These are the run's fits: exactly one per slot, whatever was killed and redone on the way.
    """
    board = SlotBoard(list(trials))
    return [board.done[s] for s in range(n_slots) if s in board.done]


def study_key(study: optuna.Study) -> tuple[int, str]:
    """The key of this process's caches of a study's reads: its storage object and its name (an id means
    nothing once the storage is copied, so those caches start empty again after pickling)."""
    return id(internals.storage_of(study)), study.study_name


class SlotClaims:
    """The claim and rung-barrier protocol a :class:`~fairops.fairband.FairbandSampler` runs on its studies.

    :meth:`take` gives a trial its slot once every lower-numbered running trial has claimed (checking that the
    study was started with this worker's ``configuration``, whose hash goes into every claim); :meth:`claim`
    and :meth:`publish` write the claim; :meth:`ranking` and :meth:`wait_for_rung` give a later-rung slot the
    ranked fits of the previous rung, or the slot to redo first. The caches of storage reads and the lock
    belong to one process: pickling keeps the settings only.

    >>> import optuna
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> study = optuna.create_study(directions=["maximize"] * 2)
    >>> claims = SlotClaims(FairbandSettings(), {"seed": 0}, wait_timeout=60.0, poll_interval=0.2)
    >>> trial = study.ask()
    >>> claims.take(study, trial)
    0
    >>> claims.publish(study, trial, claims.claim(trial, 0))
    >>> claim_of(study.trials[0]).slot, list(claims.board(study).running)
    (0, [0])
    """

    def __init__(self, settings: FairbandSettings, configuration: dict[str, Any], wait_timeout: float,
                 poll_interval: float) -> None:
        self.settings = settings
        self.configuration = configuration
        self.configuration_hash = configuration_hash(configuration)
        self.wait_timeout = wait_timeout
        self.poll_interval = poll_interval
        self._start_process_state()

    def _start_process_state(self) -> None:
        self._lock = threading.Lock()
        self._claimed = threading.Condition(self._lock)  # notified whenever a trial of this process claims
        self._boards: dict[tuple[int, str], SlotBoard] = {}  # by study_key
        # by study_key, iteration, bracket and the rung ranked
        self._rankings: dict[tuple[int, str, int, int, int], Ranking] = {}
        self._recorded_studies: set[tuple[int, str]] = set()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in ("_lock", "_claimed", "_boards", "_rankings", "_recorded_studies"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._start_process_state()

    def board(self, study: optuna.Study) -> SlotBoard:
        """The current state of every slot of ``study`` (fresh read)."""
        with self._lock:
            return self._board(study).update(study.get_trials(deepcopy=False))

    def _board(self, study: optuna.Study) -> SlotBoard:
        key = study_key(study)
        if key not in self._boards:
            self._boards[key] = SlotBoard()
        return self._boards[key]

    def _waiter(self, study: optuna.Study, trial: FrozenTrial, what: str) -> Waiter:
        return Waiter(study, trial, what, self._claimed, self.wait_timeout, self.poll_interval)

    # -- claiming a slot -------------------------------------------------------------------------
    def take(self, study: optuna.Study, trial: FrozenTrial) -> int:
        """Wait until every lower-numbered running trial has claimed, then the lowest free slot (checking the
        study's configuration and recording this one's if it is the first)."""
        number = trial.number
        waiter = self._waiter(study, trial, "earlier trials to claim their slots")
        while True:
            trials = study.get_trials(deepcopy=False)
            with self._lock:
                board = self._board(study).update(trials)
                earlier = [n for n in board.unclaimed if n < number]
                index = None if earlier else board.lowest_free()
            if index is not None:
                break
            waiter.wait_for_claims(earlier)
        self._compare_configuration(study, board)
        self._record_study(study)
        return index

    def claim(self, trial: FrozenTrial, slot: int | None, status: str = HELD,
              reason: str | None = None) -> dict[str, Any]:
        """The claim record of ``trial`` (a refused trial's names no configuration)."""
        return Claim(trial.number, slot, status, None if status == REFUSED else self.configuration_hash, reason,
                     this_worker()).record()

    def publish(self, study: optuna.Study, trial: FrozenTrial, claim: dict[str, Any] | None,
                user: dict[str, Any] | None = None) -> None:
        """Write ``claim`` (a :meth:`claim` record, or None) with the ``user`` attributes in one write."""
        internals.write_trial_attrs(study, trial, user=user, system=None if claim is None else {CLAIM_ATTR: claim})
        if claim is not None:
            with self._claimed:
                self._claimed.notify_all()

    @staticmethod
    def record_outcome(study: optuna.Study, trial: FrozenTrial, state: TrialState) -> None:
        """Record that a trial holding a slot ended ``state`` by its own worker (its objective failed or pruned
        it): the slot is done, not to be redone."""
        try:
            internals.write_trial_attrs(study, trial, system={OUTCOME_ATTR: state.name})
        except optuna.exceptions.UpdateFinishedTrialError:
            pass  # another worker failed it as stale meanwhile; its slot will be redone

    def check_configuration(self, study: optuna.Study) -> None:
        """Raise :class:`~fairops.fairband.FairbandConfigurationError` if ``study`` was started with another
        configuration."""
        self._compare_configuration(study, SlotBoard(study.get_trials(deepcopy=False)))

    def _compare_configuration(self, study: optuna.Study, board: SlotBoard) -> None:
        if board.first_configuration is not None:
            check_same_configuration(study, board.first_configuration[1], self.configuration, self.configuration_hash)

    def _record_study(self, study: optuna.Study) -> None:
        key = study_key(study)
        if key not in self._recorded_studies:
            record_configuration(study, self.configuration, self.configuration_hash, self.settings)
            self._recorded_studies.add(key)

    # -- the rung barrier ----------------------------------------------------------------------
    def _previous_slots(self, slot: schedule.Slot) -> range:
        return schedule.trial_numbers_of_rung(slot.iteration, slot.bracket, slot.rung - 1, self.settings.eta,
                                              self.settings.s_max)

    def ranking(self, study: optuna.Study, slot: schedule.Slot) -> Ranking | None:
        """(alpha, promoted fits) when the rung before ``slot``'s is finished (per the last read), else None."""
        key = (*study_key(study), slot.iteration, slot.bracket, slot.rung - 1)
        with self._lock:
            cached = self._rankings.get(key)
            if cached is not None:
                return cached
            board = self._board(study)
            slots = self._previous_slots(slot)
            if not all(s in board.done for s in slots):
                return None
            previous = [board.done[s] for s in slots]
        entries: list[tuple[int, float | None, float | None]] = []
        for t in previous:
            values = t.values if t.state == TrialState.COMPLETE and t.values is not None else (None, None)
            entries.append((int(t.user_attrs["configuration_id"]), values[0], values[1]))
        by_configuration = {configuration: t for (configuration, _, _), t in zip(entries, previous)}
        alpha = ranking.resolve_alpha(self.settings.alpha, [(a, f) for _, a, f in entries])
        k = schedule.rung_sizes(slot.bracket, self.settings.eta, self.settings.s_max)[slot.rung]
        result = (alpha, [by_configuration[c] for c in ranking.top_k(entries, k, alpha)])
        with self._lock:
            self._rankings[key] = result
        return result

    def wait_for_rung(self, study: optuna.Study, trial: FrozenTrial,
                      slot: schedule.Slot) -> tuple[Ranking, None] | tuple[None, int]:
        """``(ranking, None)`` once the previous rung is finished, or ``(None, free)`` as soon as a slot ``free``
        of it is free again (its worker died): a new trial redoes that one first."""
        slots = self._previous_slots(slot)
        waiter = self._waiter(study, trial, f"the previous rung (slots {slots.start}-{slots.stop - 1})")
        while True:
            trials = study.get_trials(deepcopy=False)
            with self._lock:
                board = self._board(study).update(trials)
            ready = self.ranking(study, slot)
            if ready is not None:
                return ready, None
            free = [s for s in slots if board.is_free(s)]
            if free:
                return None, free[0]
            waiter.wait_for_fits([board.running[s].number for s in slots if s in board.running])


# A running trial that has written nothing yet is judged dead after this many heartbeat intervals
# (a live one writes its claim milliseconds after it is created).
SILENT_TRIAL_BEATS = 5

_logger = logging.getLogger("fairops.fairband.sampler")  # the sampler's log, where this was always written


def positive_seconds(value: object, name: str) -> float:
    """``value`` as a float of seconds; a ValueError naming ``name`` unless it is a positive number.

    >>> positive_seconds(2, "wait_timeout")
    2.0
    """
    if not (isinstance(value, (int, float)) and value > 0):
        raise InputError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


class Waiter:
    """Pauses between storage reads while ``trial`` waits for ``what``; keeps its heartbeat and fails dead trials.

    ``claimed`` is the condition notified whenever a trial of this process claims a slot; ``wait_timeout``
    bounds the whole wait (:class:`~fairops.fairband.FairbandWaitTimeout` after it) and ``poll_interval``
    the pause while waiting for fits.
    """

    def __init__(self, study: optuna.Study, trial: FrozenTrial, what: str, claimed: threading.Condition,
                 wait_timeout: float, poll_interval: float) -> None:
        self.study, self.trial, self.what = study, trial, what
        self.claimed, self.wait_timeout, self.poll_interval = claimed, wait_timeout, poll_interval
        self.start = self.last_beat = self.last_check = time.monotonic()
        self.pause = 0.0005
        self.interval = internals.heartbeat_interval(study)
        self.silent_since: tuple[int, float] | None = None

    def _tick(self, waiting_for: list[int]) -> None:
        now = time.monotonic()
        waited = now - self.start
        if waited > self.wait_timeout:
            raise FairbandWaitTimeout(
                f"trial {self.trial.number} waited {waited:.0f} s > wait_timeout="
                f"{self.wait_timeout:g} s for {self.what} (trials {waiting_for[:10]}); a worker "
                "probably died. Use an RDB storage with heartbeat_interval so dead workers' trials are "
                "failed and redone, or raise wait_timeout for long fits")
        if self.interval is not None:
            if now - self.last_beat >= self.interval:
                internals.beat(self.study, self.trial)
                self.last_beat = now
            if now - self.last_check >= min(self.interval, 1.0):
                internals.fail_stale_trials(self.study)
                self.last_check = now

    def wait_for_claims(self, earlier: list[int]) -> None:
        """Pause while the running trials ``earlier`` (lowest first) have not claimed their slots."""
        self._tick(earlier)
        lowest = earlier[0]
        now = time.monotonic()
        if self.silent_since is None or self.silent_since[0] != lowest:
            self.silent_since = (lowest, now)
        elif self.interval is not None and now - self.silent_since[1] > SILENT_TRIAL_BEATS * self.interval:
            # It has not claimed though nothing before it is pending: its worker died before its first write.
            if internals.fail_running_trial(self.study, lowest):
                _logger.warning("trial %d never claimed a slot within %.0f s; failed as dead", lowest,
                                now - self.silent_since[1])
            self.silent_since = None
        self._sleep(0.05)

    def wait_for_fits(self, running: list[int]) -> None:
        """Pause while the trials ``running`` fit the slots waited for."""
        self._tick(running)
        self._sleep(self.poll_interval)

    def _sleep(self, longest: float) -> None:
        with self.claimed:
            self.claimed.wait(timeout=self.pause)
        self.pause = min(self.pause * 2, longest)
