"""The adapter's own tests: `pytest adapters/codex/tests` (not part of the root suite;
the reproduction tests start the real binary)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parents[2]))  # adapters/: _driverkit
