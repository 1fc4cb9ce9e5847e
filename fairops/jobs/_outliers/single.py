"""``fairops outliers`` without ``--tune``: one FairLOF fit against plain LOF, printed and logged."""

from __future__ import annotations

from ...errors import InputError
from ...tracking._session import ensure_experiment
from .data import load_outlier_data
from .frontier import frontier_lines
from .report import compare, fit_detector, format_table, legend_text, verdict
from .tracking import _base_params, _client, default_model_name, log_result_run, print_where_to_find, resolve_stores


def parse_lambda(text) -> float | str:
    """``"auto"`` or a float in [0, 1]; anything else is a ValueError naming ``--lambda``.

    Parameters
    ----------
    text : str or float
        The ``--lambda`` value.

    Returns
    -------
    float or str
        The lambda, or ``"auto"``.

    Examples
    --------
    >>> parse_lambda("auto"), parse_lambda("0.25")
    ('auto', 0.25)
    """
    if isinstance(text, str) and text.strip().lower() == "auto":
        return "auto"
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise InputError(f"--lambda must be a number in [0, 1] or 'auto', got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise InputError(f"--lambda must be a number in [0, 1] or 'auto', got {text!r}")
    return value


def run_single(args) -> int:
    """One FairLOF fit against plain LOF, printed and logged.

    Parameters
    ----------
    args : argparse.Namespace
        The ``fairops outliers`` options.

    Returns
    -------
    int
        The exit status, 0.
    """
    lam = parse_lambda(args.lambda_)
    data = load_outlier_data(args.dataset, data=args.data, sensitive=args.sensitive, target=args.target,
                             max_rows=args.max_rows, seed=args.seed, categorical=args.categorical)
    detector = fit_detector(data, n_neighbors=args.neighbors, correction_strength=lam,
                            target_jaccard=args.target_jaccard, weight_exponent=args.weight_exponent,
                            share_exponent=args.share_exponent, correction=args.correction, top_t=args.top_t)
    result = compare(detector, data.sensitive)
    lambdas = {"LOF": 0.0, "FairLOF": detector.fitted_lambda_}
    stores = resolve_stores(args.project_dir, args.tracking_uri)
    if stores.project is not None:
        print(f"project: {stores.project}")
    print(f"data: {data.name}  rows: {data.n_rows} of {data.n_source_rows}  features: {data.features.shape[1]}  "
          f"sensitive: {','.join(data.sensitive.columns)}")
    guide = f" (guide point for Jaccard {args.target_jaccard})" if lam == "auto" else ""
    print(f"detector: FairLOF ({args.correction} correction) k={detector.n_neighbors_} t={detector.top_t_} "
          f"weight_exponent={args.weight_exponent} share_exponent={args.share_exponent} "
          f"lambda={detector.fitted_lambda_:.2f}{guide}")
    print(format_table(result, lambdas))
    print(verdict(result))
    print("\n".join(frontier_lines(detector, data.sensitive)))
    print(legend_text())

    client = _client(stores.tracking_uri)
    experiment_id = ensure_experiment(client, args.experiment, stores.artifact_location)
    params = {**_base_params(data, args), "n_neighbors": detector.n_neighbors_, "lambda": args.lambda_,
              "fitted_lambda": detector.fitted_lambda_, "target_jaccard": args.target_jaccard,
              "weight_exponent": args.weight_exponent, "share_exponent": args.share_exponent,
              "correction": args.correction,
              "top_t": detector.top_t_, "clamped_rows": detector.clamped_rows_,
              "clamped_pairs": detector.clamped_pairs_}
    tags = {"fairops.role": "outliers", "fairops.dataset": data.name}
    run_id, model_uri = log_result_run(client, experiment_id, run_name=f"fairlof-{data.name}", detector=detector,
                                       data=data, result=result, params=params, tags=tags,
                                       tracking_uri=stores.tracking_uri, path=detector.path(),
                                       model_name=args.model_name or default_model_name(data.name))
    print(f"run: {run_id} in experiment {args.experiment!r}")
    print_where_to_find(stores, experiment_id, model_uri, ui_port=args.ui_port)
    return 0
