"""What ``fairops tune`` is asked to do: its settings (one field per CLI flag), the methods and selection
rules it offers, and the fits and alpha they imply."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..._param_checks import check_alpha
from ...errors import InputError
from ...metrics._classification import FOUR_FIFTHS
from ...metrics._intervals import LEVEL
from ...tracking._stores import storage_in, tracking_uri_in
from .._options import DEFAULT_PROJECT_DIR
from .._running import HEARTBEAT_SECONDS

if TYPE_CHECKING:
    from ..._typing import Decision

METHODS = {"fb-auto": "FB-auto", "fb-bal": "FB-bal", "hb": "HB", "rs": "RS", "rs-bal": "RS-bal"}
SELECTIONS = ("robust", "fairband", "paper")  # "paper" is another name of "fairband"
SELECTION_HELP = ("robust (default): every fit gets at least 500 training rows and 50 positives, the full-budget "
                  "bracket starts with the library defaults (LightGBM, logistic regression), the fits are "
                  "ranked by lower confidence bounds, the best 3 and the most accurate fit are refit on all "
                  "training rows and the pick is chosen among the refits on cross-validated bounds; fairband (also "
                  "named paper): the paper's budget fractions, random configurations and argmax of alpha*accuracy + "
                  "(1-alpha)*fairness over the fits' values")
#: The ``--task`` help: its grammar and two examples.
TASK_HELP = ("with --data: METRIC@TARGET=VALUE,ratio=RATE, where METRIC is precision or recall, TARGET is tpr, "
             "fpr (a rate in [0, 1]) or top_k (a row count) setting the threshold on the validation rows, or "
             "threshold (a fixed probability cut-off in [0, 1]: positive at or above it on every row), and "
             "RATE is tpr, fpr or ppr (positive rate), whose lowest / highest ratio over the groups is the "
             "fairness, optionally followed by ',groups=lowest' (the default: the lowest of each sensitive "
             "column's ratio) or ',groups=intersectional' (one ratio over the columns' combined groups); "
             "e.g. 'precision@tpr=0.5,ratio=tpr' (the default: precision at 50%% TPR, equal "
             "opportunity), 'recall@fpr=0.05,ratio=fpr' (recall at 5%% FPR, predictive equality) or "
             "'precision@threshold=0.5,ratio=fpr' (precision of the decisions at probability >= 0.5)")


@dataclass
class TuneSettings:
    """Everything ``fairops tune`` needs; the CLI flags map one to one onto these fields."""

    dataset: str | None = "adult"
    data: str | None = None
    target: str | None = None
    sensitive: str | None = None
    task: str = "precision@tpr=0.5,ratio=tpr"
    method: str = "fb-auto"
    selection: str = "robust"
    alpha: float | None = None
    iterations: int = 1
    eta: int = 3
    s_max: int = 4
    profile: str = "fast"
    families: list[str] | None = None
    max_train_rows: int | None = None
    storage: str | None = None
    tracking_uri: str | None = None
    project_dir: str = DEFAULT_PROJECT_DIR
    study_name: str | None = None
    model_name: str | None = None
    n_jobs: int = 1
    seed: int = 0
    finalize: bool = True
    promote: bool = False
    progress: bool = True
    wait_timeout: float = 3600.0
    heartbeat: float = HEARTBEAT_SECONDS
    min_fairness: float | None = None
    ui_port: int = 5000
    positive: str | None = None
    holdout: str | None = None
    missing_group: str | None = None
    decision: Decision = "single"
    blind: bool = False
    fairness_line: float = FOUR_FIFTHS
    level: float = LEVEL

    def __post_init__(self):
        from ...metrics import FairnessRule
        from ...metrics._decisions import check_decision

        check_decision(self.decision)
        FairnessRule(self.fairness_line, self.level)  # refuses a line or a level out of range, naming it
        if self.method not in METHODS:
            raise InputError(f"method must be one of {sorted(METHODS)}, got {self.method!r}")
        if self.selection not in SELECTIONS:
            raise InputError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        if self.alpha is not None:
            check_alpha(self.alpha, auto=False, accepted="")  # a number, as the command line reads it
        if self.alpha is not None and self.method.startswith("rs"):
            raise InputError("--alpha applies to the Fairband methods (fb-auto, fb-bal, hb), not to random search")
        from ...fairband._schedule import check_iterations

        check_iterations(self.iterations)
        from ...fairband import iteration_size

        iteration_size(self.eta, self.s_max)  # refuses a schedule shape that is not one, naming it
        if self.n_jobs < 1:
            raise InputError(f"n-jobs must be at least 1, got {self.n_jobs}")
        if not 1 <= self.ui_port <= 65535:
            raise InputError(f"ui-port must be in [1, 65535], got {self.ui_port}")
        if (self.data is None) == (self.dataset is None):
            raise InputError("give either --dataset NAME or --data FILE (with --target and --sensitive)")
        if self.data is not None and (not self.target or not self.sensitive):
            raise InputError("--data needs --target COLUMN and --sensitive COLUMN[,COLUMN...]")
        if self.holdout is not None and self.data is None:
            raise InputError("--holdout names a column of --data FILE; a bundled --dataset has its own split")
        if self.missing_group is not None and (self.data is None or not str(self.missing_group).strip()):
            raise InputError("--missing-group names the group of --data FILE's rows missing a sensitive value: give "
                             "a non-empty name, with --data")
        if self.min_fairness is not None and not 0.0 <= self.min_fairness <= 1.0:
            raise InputError(f"min-fairness must be in [0, 1], got {self.min_fairness}")
        if self.data is not None:
            from ...metrics import Task
            from ...metrics._decisions import check_per_group_target

            # an impossible task, or per-group decisions at a fixed threshold, is refused before any fit
            task = Task.from_string(self.task, sensitive=[self.sensitive])
            if self.decision == "per-group":
                check_per_group_target(task.target)

    @property
    def tuner(self) -> str:
        return METHODS[self.method]

    @property
    def rule(self):
        """The :class:`~fairops.metrics.FairnessRule` of ``fairness_line`` and ``level``."""
        from ...metrics import FairnessRule

        return FairnessRule(self.fairness_line, self.level)

    @property
    def source_name(self) -> str:
        if self.data is not None:
            return Path(self.data).stem
        assert self.dataset is not None  # __post_init__: a data set or a file
        return self.dataset

    def resolved(self) -> TuneSettings:
        """A copy with the project folder created and default storage, tracking URI and names filled in."""
        project = Path(self.project_dir).resolve()
        needs_folder = self.storage is None or self.tracking_uri is None
        if needs_folder:
            project.mkdir(parents=True, exist_ok=True)
        alpha_part = "" if self.alpha is None else f"-alpha{self.alpha:g}"
        alpha_part += "" if self.min_fairness is None else f"-minfair{self.min_fairness:g}"
        alpha_part += "" if self.level == LEVEL else f"-level{self.level:g}"  # the fits' intervals are at the level
        mode = ("" if self.decision == "single" else f"-{self.decision}") + ("-blind" if self.blind else "")
        paper_shape = (TuneSettings.eta, TuneSettings.s_max)  # the defaults: the paper's, named by no suffix
        mode += "" if (self.eta, self.s_max) == paper_shape else f"-eta{self.eta}-smax{self.s_max}"
        name = self.study_name or \
            f"{self.source_name}-{self.method}{alpha_part}{mode}-{self.profile}-seed{self.seed}"
        return TuneSettings(**{
            **self.__dict__,
            "project_dir": str(project),
            "storage": self.storage or storage_in(project),
            "tracking_uri": self.tracking_uri or tracking_uri_in(project),
            "study_name": name,
            "model_name": self.model_name or f"fairops-{self.source_name}",
        })


def pick_alpha_of(settings: TuneSettings):
    """The alpha of the final pick: the method's (or ``--alpha``)."""
    from ...tuning._baselines import pick_alpha

    return pick_alpha(settings.tuner) if settings.alpha is None else settings.alpha


def target_trials(settings: TuneSettings) -> int:
    """Fits the run is made of: iterations x the method's fits per Fairband iteration."""
    from ...tuning._baselines import trials_per_iteration

    return settings.iterations * trials_per_iteration(settings.tuner, settings.eta, settings.s_max)


def families_of(settings: TuneSettings) -> list[str]:
    """The families to tune: the chosen ones, checked, or every built-in one the run can use."""
    from ...tuning._search_space import check_families, families_for

    return check_families(settings.families or families_for(blind=settings.blind), blind=settings.blind)
