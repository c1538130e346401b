"""jobdedup: find the same job ad posted many times.

The installed package holds the repository's folders as subpackages (see setup.py):
`jobdedup.pipeline` (I/O, engine, command line), `jobdedup.features` (normalised fields and pair
features), `jobdedup.models` (classifier, rules, the bundled default model) and `jobdedup.data`
(the bundled labelled sample). Nothing else is installed at the top level.

    >>> from jobdedup.pipeline import Deduplicator, read_ads  # doctest: +SKIP
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("jobdedup")
except PackageNotFoundError:  # imported from a checkout that is not installed
    __version__ = "0+unknown"
