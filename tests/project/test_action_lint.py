"""actionlint's checks on action.yml and every workflow of the repository, through
jactionlint (a test extra pinned in pyproject.toml; it began as a fork of actionlint and
also reads composite actions): clean at its default profile, warnings included. Where
shellcheck is installed (Debian's package; CI installs it) the `run:` scripts are
checked by it too."""

from __future__ import annotations

import importlib.util
import re
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
    assert {"ci.yml", "release.yml"} <= set(workflows)
    files = ["action.yml", *(f".github/workflows/{w}" for w in workflows)]
    # named, not found: an unpacked sdist has no .git for the linter to find a project by
    proc = _lint("--verbose", *files)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checked = proc.stdout + proc.stderr
    for name in files:
        assert name in checked, checked[-3000:]
    assert f"Found 0 errors in {len(files)} files" in checked, checked[-3000:]


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


def test_the_readme_workflow_is_clean_and_uses_only_the_actions_inputs(tmp_path: Path) -> None:
    """The copy-paste workflow of README "In CI: the GitHub Action", with the Action
    taken from the same folder (`uses: ./`) so the linter checks every `with:` key
    against action.yml's inputs."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## In CI: the GitHub Action", 1)[1].split("\n## ", 1)[0]
    workflow = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    pinned = re.compile(r"OWNER/capconf@[0-9a-f]{40}")
    assert len(pinned.findall(workflow)) == 2
    local = pinned.sub("./", workflow)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "capconf.yml").write_text(local, encoding="utf-8")
    shutil.copy(REPO / "action.yml", tmp_path / "action.yml")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # the linter's project
    proc = _lint(cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # ... and the check can fail: an input the Action does not have
    (tmp_path / ".github" / "workflows" / "capconf.yml").write_text(
        local.replace("require-features:", "required-features:"), encoding="utf-8")
    wrong = _lint(cwd=tmp_path)
    assert wrong.returncode == 1 and "required-features" in wrong.stdout, wrong.stdout
