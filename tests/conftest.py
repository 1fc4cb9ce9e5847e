"""Shared test fixtures and paths."""

import os
from pathlib import Path

# scikit-learn's estimator checks include array-API input checks that only run when SciPy's array
# API support is on; it must be set before SciPy is first imported, so it is set here.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """URL of the PostgreSQL server for distributed tests (``.ci/postgres.sh`` starts one).

    Missing locally: the test is skipped with the reason. In CI (``FAIROPS_REQUIRE_SERVICES=1``)
    a missing server fails the test instead, so nothing is silently left untested.
    """
    url = os.environ.get("FAIROPS_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("FAIROPS_REQUIRE_SERVICES"):
            pytest.fail("FAIROPS_TEST_POSTGRES_URL is not set but FAIROPS_REQUIRE_SERVICES requires it")
        pytest.skip("FAIROPS_TEST_POSTGRES_URL not set (run: export FAIROPS_TEST_POSTGRES_URL=$(bash .ci/postgres.sh))")
    return url


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    """Where the browser tests keep their screenshots: ``FAIROPS_SCREENSHOTS`` (the README's pictures come
    from ``FAIROPS_SCREENSHOTS=docs``), else the test's temporary folder."""
    folder = os.environ.get("FAIROPS_SCREENSHOTS")
    if not folder:
        return tmp_path_factory.mktemp("screenshots")
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder)
