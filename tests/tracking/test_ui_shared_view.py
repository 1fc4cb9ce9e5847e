"""The views fairops saves for MLflow's runs page use only keys the installed UI reads.

The UI applies a shared view by picking the keys it knows from the stored JSON, each over its default; the
lists of those keys are arrays in its JavaScript bundle. Run at both ends of the supported MLflow range, this
finds a release whose UI no longer reads what ``fairops.tracking._ui_shared_view`` writes (the browser test,
tests/tracking/test_mlflow_ui_browser.py, then shows what the page makes of it).
"""

import json
import re
from pathlib import Path

import mlflow
import pytest

from fairops.tracking import _ui_shared_view as shared


@pytest.fixture(scope="module")
def bundle() -> str:
    folder = Path(mlflow.__file__).parent / "server" / "js" / "build" / "static" / "js"
    scripts = sorted(folder.glob("*.js"))
    assert scripts, f"no UI bundle under {folder}"
    return "".join(path.read_text(encoding="utf-8", errors="ignore") for path in scripts)


def _key_list(bundle: str, member: str) -> set[str]:
    """The one array of plain names in the bundle that holds ``member``."""
    found = [json.loads(array) for array in set(re.findall(r'\[(?:"[A-Za-z]+",){3,}"[A-Za-z]+"\]', bundle))
             if f'"{member}"' in array]
    assert len(found) == 1, f"{len(found)} arrays of names hold {member!r}"
    return set(found[0])


def test_every_key_of_a_saved_view_is_one_the_installed_ui_reads(bundle):
    assert shared.view_supported(mlflow.__version__)
    state = shared.view_state(columns=[shared.column("metrics", "fairness")],
                              charts=[shared.scatter_chart("c1", "s1", "accuracy", "fairness", "front")],
                              section="s1", section_name="fairops", order_by="metrics.`accuracy`")
    facets, view = _key_list(bundle, "searchFilter"), _key_list(bundle, "compareRunCharts")
    assert facets == set(shared._FACETS)  # the search facets: the UI's whole list, each given
    assert set(state) - facets <= view, set(state) - facets - view
    assert set(state) <= facets | view


def test_the_ui_reads_the_tag_prefix_and_the_address_parameter(bundle):
    assert f'"{shared.TAG_PREFIX}"' in bundle
    assert '"viewStateShareKey"' in bundle
