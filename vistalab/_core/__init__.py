"""The dependency-free core every layer of vista-lab may import: the one error
root (with its did-you-mean helper), the one atomic file write, the one seed
normaliser, and the optional-dependency import that names the extra to install.
The path door checks (``_paths``) and the one-line error contract of every entry
point (``_oneline``: ``vista-lab`` and the figure scripts) live here too.
It imports nothing first-party, only the standard library (numpy on first use:
``import vistalab._core`` stays cheap, for the CLI's start-up).
"""

from ._errors import DomainError, MissingExtraError, UnknownNameError, VistaLabError, suggest
from ._files import atomic_write, fsync_dir
from ._limits import (
    MAX_FILE_BYTES,
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    MAX_REQUEST_BYTES,
    IntegerTooLongError,
    check_depth,
    check_text_size,
    json_loads,
    loads_bounded,
    read_bounded,
    toml_loads,
)
from ._optional import EXTRAS, import_optional
from ._plain import PlainRecord, to_plain
from ._repr import MAX_REPR, short_repr
from ._seeding import SeedLike, child_rng, child_seq, plain_entropy, seed_sequence

__all__ = [
    "VistaLabError",
    "DomainError",
    "UnknownNameError",
    "suggest",
    "MissingExtraError",
    "EXTRAS",
    "import_optional",
    "atomic_write",
    "fsync_dir",
    "SeedLike",
    "seed_sequence",
    "child_seq",
    "child_rng",
    "plain_entropy",
    "to_plain",
    "PlainRecord",
    "short_repr",
    "MAX_REPR",
    "MAX_JSON_DEPTH",
    "MAX_REQUEST_BYTES",
    "MAX_FILE_BYTES",
    "MAX_INT_DIGITS",
    "IntegerTooLongError",
    "json_loads",
    "toml_loads",
    "check_depth",
    "check_text_size",
    "loads_bounded",
    "read_bounded",
]
