"""The one compiled part of Tansuo: the character-by-character work of building a
document, in C (services/common/_native.c). Everything else is in pyproject.toml.

``optional=True``: where no C compiler is found the install still succeeds, and the
same folding, streams and shingles come from Python: building a document takes 1.56
instead of 0.62 ms of CPU on the demo pages (docs/benchmarks.md, section 1b).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "services.common._native",
            ["services/common/_native.c"],
            optional=True,
        )
    ]
)
