"""The dependency-free core every layer of vista-lab may import: the one error
root (with its did-you-mean helper), the one atomic file write and the one seed
normaliser. It imports nothing first-party, only the standard library and numpy.
"""

from ._errors import DomainError, UnknownNameError, VistaLabError, suggest
from ._files import atomic_write, fsync_dir
from ._seeding import SeedLike, child_rng, child_seq, plain_entropy, seed_sequence

__all__ = [
    "VistaLabError",
    "DomainError",
    "UnknownNameError",
    "suggest",
    "atomic_write",
    "fsync_dir",
    "SeedLike",
    "seed_sequence",
    "child_seq",
    "child_rng",
    "plain_entropy",
]
