"""Entry point: `python adapters/codex/driver.py` (see capconf_codex/driver.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parent.parent))  # adapters/: _driverkit

from capconf_codex.driver import main

if __name__ == "__main__":
    sys.exit(main())
