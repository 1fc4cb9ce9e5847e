"""fairops.fairband's face names itself as the module of its public objects, and no doctest behind it is lost."""

import doctest
import importlib
import pickle
import pkgutil
from pathlib import Path

import fairops.fairband as face

MODULES = [face] + [importlib.import_module(f"fairops.fairband.{m.name}") for m in pkgutil.iter_modules(face.__path__)]


def test_the_face_is_the_module_of_every_public_object_and_of_its_classes_own_methods():
    assert all(getattr(face, name).__module__ == "fairops.fairband" for name in face.__all__)
    assert face.FairbandSettings.slot.__module__ == "fairops.fairband"  # a method with its own doctest
    assert face.FairbandSampler.__init__.__module__ == "fairops.fairband"
    assert all(module.__name__.startswith("fairops.fairband._") for module in MODULES[1:])


def test_every_doctest_example_behind_the_face_is_collected_exactly_once():
    written = sum(line.lstrip().startswith(">>> ") for module in MODULES
                  for line in Path(module.__file__).read_text(encoding="utf-8").splitlines())
    finder = doctest.DocTestFinder()
    found = sum(len(test.examples) for module in MODULES for test in finder.find(module))
    assert found == written > 100


def test_a_pickled_sampler_names_its_class_by_the_face():
    by_reference = pickle.dumps(face.FairbandSampler)
    assert b"fairops.fairband" in by_reference and b"_sampler" not in by_reference
    assert pickle.loads(pickle.dumps(face.FairbandSampler(seed=0, alpha=0.5))).alpha == 0.5
    assert pickle.loads(pickle.dumps(face.select_best)) is face.select_best
