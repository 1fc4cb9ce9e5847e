"""``fairops monitor MODEL``: the champion's accuracy and fairness over windows of labelled rows.

Rows are scored in windows of ``--window N`` (file order, or the order of ``--time-column``) as the model serves
them (at the threshold it was registered with); every window's accuracy and fairness, with intervals at the
fairness rule's level (95% by default; fairness exact, Clopper-Pearson per group), become step metrics of one
monitoring run in the model's experiment (step = window number, from 1). First the rule and the baseline are
printed: the fairness line and level the version was registered under (``--fairness-line``, ``--level`` replace
them), the champion's validation fairness with its lower bound, and the alert rule: a window alerts when the
interval of its fairness lies below the fairness line (what the gate refuses), and with ``--against-baseline``
also when it lies below the baseline's lower bound (a drop beyond noise from what the version showed; a
``--baseline`` number replaces the baseline). Then a line per window, ``ALERT window K: ...`` for one that
alerts, naming what fell and below what: each sensitive attribute is held to its own bound, and the task's ratio
(the lowest over its attributes, or over their combined groups) to the overall one. A window with too few rows
of some group for any decisions to alert is marked "too few rows for an alert", and the last lines count those
windows and estimate the window size that could alert; when no window could, a warning says the run saw nothing.
``--sensitive`` may name some of the task's attributes only (a file without the others): those are watched, each
against its own bound. Exit status 3 when any window alerts, 0 otherwise (also when no window could alert), 2 on
a usage or data error.

Files are read in chunks and one window is held at a time, so a file of any length streams in bounded memory; a
``--time-column`` the file is not sorted by makes the whole file be read and sorted first.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np

from ..datasets import LOADERS
from ..errors import InputError
from ._options import add_rule_options, refuse_options

CHUNK_ROWS = 200_000


def read_chunks(path, chunk_rows: int = CHUNK_ROWS, columns=None):
    """DataFrames of at most ``chunk_rows`` rows from a CSV or Parquet file, in file order, each row's index its
    row in the file (from 0)."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise InputError(f"data file {str(path)!r} must end in .csv or .parquet")
    try:
        if suffix == ".csv":
            with pd.read_csv(path, chunksize=chunk_rows, usecols=columns) as reader:
                yield from reader
        else:
            import pyarrow.parquet as pq

            start = 0
            for batch in pq.ParquetFile(path).iter_batches(batch_size=chunk_rows, columns=columns):
                frame = batch.to_pandas()
                frame.index = range(start, start + len(frame))
                start += len(frame)
                yield frame
    except (ValueError, OSError) as error:  # a malformed CSV, a damaged Parquet file, a column it lacks
        raise InputError(f"data file {str(path)!r} cannot be read: {error}") from None


def windows_of(chunks, size: int):
    """Frames of exactly ``size`` rows cut from a stream of frames (the last one may be shorter), each row keeping
    its index (its row in the file).

    >>> import pandas as pd
    >>> [len(w) for w in windows_of(iter([pd.DataFrame({"x": range(7)}), pd.DataFrame({"x": range(4)})]), 5)]
    [5, 5, 1]
    """
    import pandas as pd

    pending, held = [], 0
    for chunk in chunks:
        while len(chunk):
            piece = chunk.iloc[:size - held]
            chunk = chunk.iloc[len(piece):]
            pending.append(piece)
            held += len(piece)
            if held == size:
                yield pd.concat(pending)
                pending, held = [], 0
    if held:
        yield pd.concat(pending)


def binary_labels(column, positive=None) -> np.ndarray:
    """0/1 labels: the column as it is when it holds only 0/1 (or booleans), else ``== positive``.

    >>> binary_labels([1, 0, 1]).tolist(), binary_labels(["yes", "no"], positive="yes").tolist()
    ([1, 0, 1], [1, 0])
    """
    import pandas as pd

    values = pd.Series(column)
    if values.isna().any():
        raise InputError(f"the label column has {int(values.isna().sum())} missing value(s)")
    if positive is not None:
        return (values.astype(str) == str(positive)).to_numpy(np.int8)
    if not set(pd.unique(values).tolist()) <= {0, 1}:
        shown = sorted(map(str, pd.unique(values)))[:4]
        raise InputError(f"the label column holds {shown}, not 0/1: give --positive VALUE (the class that is 1)")
    return values.astype(np.int8).to_numpy()


def _time_sorted(path, column) -> bool:
    """Whether the file's rows are in the order of ``column`` (read by :func:`~.time_column.time_keys`)."""
    from ._time_column import time_keys

    where, last, kind = Path(path).name, None, None
    header = next(read_chunks(path, chunk_rows=1), None)
    if header is not None and column not in header.columns:
        raise InputError(f"time column {column!r} not in {where}; it has {list(header.columns)}")
    for chunk in read_chunks(path, columns=[column]):
        keys = time_keys(chunk[column], column, where)
        if kind is not None and keys.kind != kind:
            raise InputError(f"time column {column!r} of {where} holds numbers and times; give it one kind")
        kind, values = keys.kind, keys.values
        if len(values) and ((last is not None and values[0] < last) or (np.diff(values) < 0).any()):
            return False
        last = values[-1] if len(values) else last
    return True


def file_windows(path, size, target, sensitive, *, time_column=None, positive=None):
    """``(X, y, sensitive)`` per window of a file (see the module docstring); X's index is each row's row in the
    file (from 0)."""
    chunks = read_chunks(path)
    if time_column is not None and not _time_sorted(path, time_column):
        import pandas as pd

        from ._time_column import time_keys

        whole = pd.concat(list(read_chunks(path)))
        order = np.argsort(time_keys(whole[time_column], time_column, Path(path).name).values, kind="stable")
        chunks = iter([whole.iloc[order]])
    for frame in windows_of(chunks, size):
        missing = [c for c in [target, *sensitive] if c not in frame.columns]
        if missing:
            raise InputError(f"column(s) {missing} not in {Path(path).name}; it has {list(frame.columns)}")
        yield frame.drop(columns=[target]), binary_labels(frame[target], positive), frame[sensitive].astype(str)


def dataset_windows(name, size):
    """``(X, y, sensitive)`` per window of a bundled data set's rows, in their order."""
    from ..datasets import load_dataset

    data = load_dataset(name)
    for start in range(0, len(data.y), size):
        rows = slice(start, start + size)
        yield data.X.iloc[rows], data.y[rows], data.sensitive.iloc[rows]


def _run(args) -> int:
    from ..registry._monitoring import monitor
    from ._promote import tracking_uri_of
    from ._running import quiet_libraries

    if args.window < 2:
        raise InputError(f"--window must be at least 2 rows, got {args.window}")
    if (args.data is None) == (args.dataset is None):
        raise InputError("give either --data FILE (with --target and --sensitive) or --dataset NAME")
    if args.dataset is not None:
        refuse_options(args, ["--target", "--sensitive", "--time-column", "--positive"],
                       "to a bundled --dataset, which brings its own label and sensitive columns")
        windows = dataset_windows(args.dataset, args.window)
    else:
        if not args.target or not args.sensitive:
            raise InputError("--data needs --target COLUMN and --sensitive COLUMN[,COLUMN...]")
        columns = [c.strip() for c in args.sensitive.split(",")]
        windows = file_windows(args.data, args.window, args.target, columns, time_column=args.time_column,
                               positive=args.positive)
    quiet_libraries()
    result = monitor(args.model, windows, version=args.version, baseline=args.baseline,
                     fairness_line=args.fairness_line, level=args.level, against_baseline=args.against_baseline,
                     tracking_uri=tracking_uri_of(args.project_dir, args.tracking_uri),
                     params={"window": args.window, "source": args.data or args.dataset},
                     sensitive=None if args.dataset is not None else columns,
                     source=Path(args.data).name if args.data is not None else f"the {args.dataset} rows")
    first = (f" (first: window {result.alerts[0]}, {', '.join(result.alerted[result.alerts[0]])})"
             if result.alerts else "")
    print(f"{len(result.windows)} windows, {len(result.alerts)} alert(s){first}; model {args.model} version "
          f"{result.version}; monitoring run {result.run_id}")
    if result.blind:
        wider = (f"; windows of about {result.rows_for_an_alert} rows could alert at the most unequal decisions, "
                 "larger ones see smaller drops" if result.rows_for_an_alert is not None else "")
        print(f"warning: none of the {len(result.windows)} windows could alert whatever the model decided, so this "
              f"run could not see a fairness drop and exit status 0 does not mean fair{wider}", file=sys.stderr)
    return result.exit_code


def add_parser(subcommands) -> None:
    from ._promote import model_parser

    parser = model_parser(subcommands, "monitor", "score labelled rows in windows with the champion; alert when "
                          "fairness drops", __doc__)
    parser.epilog = textwrap.fill(
        "Intervals are at the fairness rule's level (95% by default; exact, Clopper-Pearson per group). The rule and "
        "the baseline are printed first. A window alerts when the interval of its fairness lies below the fairness "
        "line (default: the line the version was registered under, 0.8), and with --against-baseline also when it "
        "lies below the lower bound of the version's validation fairness (or below --baseline). A window with too "
        "few rows of some group for any decisions to alert is marked, and the window size that could is estimated. "
        "Exit status: 3 a window alerted, 0 none did (a warning says so when none could), 2 a usage or data error.",
        100)
    source = parser.add_argument_group("rows")
    source.add_argument("--data", help="a CSV or Parquet file of labelled rows, read in chunks")
    source.add_argument("--dataset", choices=sorted(LOADERS), help="a bundled data set's rows, in order")
    source.add_argument("--target", help="with --data: the label column")
    source.add_argument("--positive", help="with --data: the label value that is class 1 (labels not 0/1)")
    source.add_argument("--sensitive", help="with --data: sensitive column(s), comma-separated: the task's, or "
                        "some of them to watch only those")
    source.add_argument("--time-column", help="with --data: order the rows by this column")
    source.add_argument("--window", type=int, required=True, help="rows per window")
    model = parser.add_argument_group("model")
    model.add_argument("--version", help="a version number or @alias (default: @champion)")
    model.add_argument("--baseline", type=float,
                       help="a fairness ratio a window's interval must not lie below, in place of the version's "
                            "validation fairness (implies --against-baseline)")
    alerts = parser.add_argument_group("alert rule")
    add_rule_options(alerts, recorded=True)
    alerts.add_argument("--against-baseline", action="store_true",
                        help="also alert when a window's interval lies below the lower bound of the version's "
                             "validation fairness (a drop beyond noise, even above the line)")
    parser.set_defaults(run=_run)
