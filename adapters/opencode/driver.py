"""Entry point: `python adapters/opencode/driver.py` (see capconf_opencode/driver.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parent.parent))  # adapters/: _driverkit

from capconf_opencode.driver import main

if __name__ == "__main__":
    sys.exit(main())
