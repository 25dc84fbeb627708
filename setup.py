"""The one compiled part of Tansuo: the character-by-character work of building a
document, in C (services/common/_native.c). Everything else is in pyproject.toml.

``optional=True``: where no C compiler is found the install still succeeds, and the
same folding, streams and shingles come from Python, about 0.7 ms a page slower.
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
