"""capconf reference simulator: a deterministic implementation of the capability model.

The model is pure functions and immutable values (sans-IO, like h11); file-system and
stdio access live in a few edge modules (``driver_stdio``, ``fsview``).
"""

SPEC_VERSION = "0.1.0"
IMPLEMENTATION_NAME = "capconf-reference-simulator"
