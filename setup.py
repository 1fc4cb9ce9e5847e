"""Build the compiled kernels.

Every ``cython_ext/<subpackage>/<module>.pyx`` becomes the extension module
``fairops.<subpackage>.<module>``, so adding a kernel needs no edit here.
"""

import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_namespace_packages, find_packages, setup

HERE = Path(__file__).parent


def _extensions():
    extensions = []
    for source in sorted((HERE / "cython_ext").glob("*/*.pyx")):
        relative = source.relative_to(HERE)
        module = "fairops." + ".".join(relative.with_suffix("").parts[1:])
        extensions.append(
            Extension(
                module,
                [relative.as_posix()],
                include_dirs=[numpy.get_include(), relative.parent.as_posix()],
                # C headers beside a kernel are part of it (and of the source distribution)
                depends=sorted(path.relative_to(HERE).as_posix() for path in source.parent.glob("*.h")),
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=["-O3"],
            )
        )
    return extensions


setup(
    # plugins/ holds packages imported under their own folder names (fairops_mlflow_plugins).
    packages=find_namespace_packages(include=["fairops", "fairops.*"], exclude=["*.__pycache__"])
    + find_packages(where="plugins"),
    package_dir={name: f"plugins/{name}" for name in find_packages(where="plugins")},
    # the kernels compile side by side, one per core (translated by Cython the same way)
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
    ext_modules=cythonize(
        _extensions(),
        nthreads=os.cpu_count() or 1,
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
