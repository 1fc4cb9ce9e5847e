"""No doctest of the modules behind fairops.fairband's face is lost in the merge of its modules."""

import doctest
import importlib
import pkgutil
from pathlib import Path

import fairops.fairband as face

MODULES = [face] + [importlib.import_module(f"fairops.fairband.{m.name}") for m in pkgutil.iter_modules(face.__path__)]


def test_every_doctest_example_behind_the_face_is_collected_exactly_once():
    written = sum(line.lstrip().startswith(">>> ") for module in MODULES
                  for line in Path(module.__file__).read_text(encoding="utf-8").splitlines())
    finder = doctest.DocTestFinder()
    found = sum(len(test.examples) for module in MODULES for test in finder.find(module))
    assert found == written > 100

