"""Serve the reference with one mutant applied over stdio: ``python -m mutants NAME``."""

import sys

from capconf.conformance.reference import serve_stdio
from mutants import apply_mutant

if __name__ == "__main__":
    apply_mutant(sys.argv[1])
    sys.exit(serve_stdio())
