"""Each standalone reproduction still shows its finding against the pinned binary
(exit 0 = reproduced). Skipped when the binary is not installed."""

import subprocess
import sys
from pathlib import Path

import pytest
from capconf_codex.runtime import binary_installed

REPRO = Path(__file__).resolve().parent.parent / "repro"
SCRIPTS = sorted(p for p in REPRO.glob("*.py") if not p.name.startswith("_"))


@pytest.mark.skipif(not binary_installed(), reason="npm ci --prefix adapters/codex first")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_reproduction_shows_its_finding(script: Path) -> None:
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=180, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FINDING" in out.stdout
