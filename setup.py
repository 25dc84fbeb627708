"""The one compiled part of Tansuo: the character-by-character work of building a
document, in C (services/common/_native.c). Everything else is in pyproject.toml.

``optional=True``: where no C compiler is found the install still succeeds, and the
same folding, streams and MinHash pair hashes come from Python, more than twice as
slowly (docs/benchmarks.md, section 1b's seventh and eighth rounds).
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
