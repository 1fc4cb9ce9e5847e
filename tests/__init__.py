"""fairops' tests, one package per fairops package they test (fairband/, scaff/, fairlof/, reductions/, metrics/,
datasets/, tuning/, tracking/, mlflow_models/ for fairops.mlflow, serving/, jobs/ for the commands); project/ holds
the checks of the repository as a whole and examples/ the runs of examples/.

A helper module lives in the folder whose tests use it, or here beside conftest.py when several folders do, and is
imported by its full name (``from tests.services import start``). Helpers run as scripts (fairband_worker.py,
mlflow_models/model_fuzz_child.py) are started by their path.
"""
