"""The adapter's own tests: `pytest adapters/opencode/tests` (not part of the root suite,
which must stay fast; the repro tests start the real binary)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parents[2]))  # adapters/: _driverkit
