"""actionlint's checks on action.yml and every workflow of the repository, through
jactionlint (a test extra pinned in pyproject.toml; it began as a fork of actionlint and
also reads composite actions): clean at its default profile, warnings included. Where
shellcheck is installed (Debian's package; CI installs it) the `run:` scripts are
checked by it too."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest
import shared_folder

REPO = Path(__file__).resolve().parent.parent.parent


def _jactionlint() -> str:
    if importlib.util.find_spec("jactionlint") is None:
        message = ("jactionlint is not installed (a test extra: pip install -e '.[test]'; "
                   "its wheels are built for Linux, macOS and Windows)")
        if shared_folder.in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    from jactionlint import get_binary_path

    return str(get_binary_path())


def _lint(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_jactionlint(), "--strict-exit", "--no-color", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_action_and_every_workflow_are_clean() -> None:
    workflows = sorted(p.name for p in (REPO / ".github" / "workflows").glob("*.y*ml"))
    assert workflows == ["ci.yml", "release.yml"]
    proc = _lint("--verbose")  # no file: the repository's workflows and composite actions
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checked = proc.stdout + proc.stderr
    for name in ("action.yml", *(f".github/workflows/{w}" for w in workflows)):
        assert name in checked, checked[-3000:]


def test_an_input_expanded_into_a_script_is_caught(tmp_path: Path) -> None:
    """The check can fail: the Action with one input put straight into a script."""
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    needle = 'bin="$RUNNER_TEMP/capconf-venv/bin"\n'
    assert needle in text
    (tmp_path / "action.yml").write_text(
        text.replace(needle, needle + '        echo "${{ inputs.impl }}"\n', 1),
        encoding="utf-8")
    proc = _lint("action.yml", cwd=tmp_path)
    assert proc.returncode == 1 and "inputs.impl" in proc.stdout, proc.stdout + proc.stderr


def test_shellcheck_checks_the_scripts_when_installed(tmp_path: Path) -> None:
    """With shellcheck on PATH the run: scripts are checked: an unquoted expansion in a
    copy of the Action is caught (SC2086), so the clean result above covered them."""
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (Debian: apt-get install shellcheck)")
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    needle = 'bin="$RUNNER_TEMP/capconf-venv/bin"\n'
    (tmp_path / "action.yml").write_text(
        text.replace(needle, needle + "        ls $bin\n", 1), encoding="utf-8")
    proc = _lint("action.yml", cwd=tmp_path)
    assert proc.returncode == 1 and "SC2086" in proc.stdout, proc.stdout + proc.stderr
