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
compare-and-set: each claim is a function of the claims before it).

>>> import optuna
>>> from fairops.fairband import FairbandSampler
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0))
>>> study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.5), n_trials=3)
>>> board = SlotBoard(study.get_trials(deepcopy=False))
>>> sorted(board.done), board.lowest_free()
([0, 1, 2], 3)
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from optuna.trial import FrozenTrial, TrialState

CLAIM_ATTR = "fairband:claim"
OUTCOME_ATTR = "fairband:outcome"
HELD, RELEASED, REFUSED = "held", "released", "refused"


@dataclass(frozen=True)
class Claim:
    """What one trial claimed: a ``slot`` (``status`` "held"), or nothing ("released", "refused")."""

    trial: int
    slot: int | None
    status: str
    configuration: str | None = None  # hash of the worker's study configuration
    reason: str | None = None
    worker: str | None = None  # host:pid of the process that claimed

    def record(self) -> dict:
        record = {"trial": self.trial, "slot": self.slot, "status": self.status}
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


def _exempt(trial: FrozenTrial) -> bool:
    # Enqueued or retried trials never hold a slot (the sampler refuses them), so nobody waits for them.
    return "fixed_params" in trial.system_attrs or "failed_trial" in trial.system_attrs


class SlotBoard:
    """The state of every slot, read from a study's trials; :meth:`update` takes a fresh read.

    ``done``: slot -> the finished trial holding it; ``running``: slot -> the running trial holding it;
    ``unclaimed``: numbers of running trials that have not claimed yet (the ones later claims wait for);
    ``frontier``: one past the highest slot ever claimed; ``first_configuration``: (number, hash) of the
    lowest-numbered trial that was given a slot (its configuration is the study's).
    Finished trials never change, so they are read once; an update costs one pass over the trial list.
    """

    def __init__(self, trials=()) -> None:
        self.done: dict[int, FrozenTrial] = {}
        self.frontier = 0
        self.first_configuration: tuple[int, str] | None = None
        self._finished: set[int] = set()
        self._settled = 0  # every trial numbered below is finished and read
        self._low = 0  # every slot below is done
        self.update(trials)

    def update(self, trials) -> SlotBoard:
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
            if t.state == TrialState.RUNNING and not _exempt(t):
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


def fits_of_run(trials, n_slots: int) -> list[FrozenTrial]:
    """The finished trial of each of the first ``n_slots`` slots that has one, in slot order.

    These are the run's fits: exactly one per slot, whatever was killed and redone on the way.
    """
    board = SlotBoard(list(trials))
    return [board.done[s] for s in range(n_slots) if s in board.done]
