"""The pre-commit hook (`.pre-commit-hooks.yaml`): it runs `capconf validate` on the
subagent definitions of a repository, and only on them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent.parent
DEFINITIONS = Path(__file__).resolve().parent.parent / "definitions"
[HOOK] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_the_hook_runs_validate_on_agent_files_only() -> None:
    assert HOOK["id"] == "capconf-validate" and HOOK["entry"] == "capconf validate"
    assert HOOK["language"] == "python"
    files = re.compile(HOOK["files"])
    for path in (".claude/agents/reviewer.md", "agents/triage.yaml", "x/agents/a.yml"):
        assert files.search(path), path
    for path in ("docs/agents.md", "agents/sub/notes.txt", "README.md", "agents/x.json"):
        assert not files.search(path), path


def _hook_repository(into: Path, env: dict[str, str]) -> str:
    """A one-commit copy of this checkout as it is on disk (committed or not, untracked
    files included, ignored ones left out), as pre-commit's ``try-repo`` makes one, and
    its commit. Unlike ``try-repo``, which installs the hook into a new store on every
    call, ``pre-commit run`` against this copy installs it once and reuses it."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, check=True, capture_output=True)
    for name in sorted({n for n in listed.stdout.decode().split("\0") if n}):
        source, target = REPO / name, into / name
        if not source.is_symlink() and not source.is_file():
            continue  # listed but deleted in the working tree
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    for argv in (["git", "init", "-q"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "--no-verify", "-m", "hook under test"]):
        subprocess.run(argv, cwd=into, check=True, env=env)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=into, check=True, env=env,
                          capture_output=True, text=True).stdout.strip()


@pytest.mark.slow
def test_pre_commit_flags_a_bad_definition(tmp_path: Path) -> None:
    """Real pre-commit, with this checkout as the hook's repository (it installs the
    hook's own environment from the package index, as for any pre-commit user)."""
    pytest.importorskip("pre_commit", reason="pre-commit is a test extra")
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout (pre-commit installs hooks from a repository)")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    hook_repo = tmp_path / "hook"
    rev = _hook_repository(hook_repo, env)
    project = tmp_path / "project"
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "good.yaml").write_text("name: ok\ndescription: fine\ntools: [read]\n"
                                      "prompt: Work.\n")
    shutil.copy(DEFINITIONS / "03-unknown-tools.md", agents / "unknown.md")  # a warning
    (agents / "broken.yaml").write_text("name: x\ntools: [read\nprompt: y\n")  # an error
    (project / "notes.md").write_text("not an agent: tools: [Nope]\n")

    def configure(args: list[str]) -> None:
        hook: dict[str, object] = {"id": HOOK["id"], **({"args": args} if args else {})}
        (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(
            {"repos": [{"repo": str(hook_repo), "rev": rev, "hooks": [hook]}]}))

    configure([])
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True, env=env)

    def run(*files: str) -> subprocess.CompletedProcess[str]:
        which = ["--files", *files] if files else ["--all-files"]
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", HOOK["id"], *which],
                              cwd=project, env=env, capture_output=True, text=True,
                              timeout=900)

    flagged = run()
    out = flagged.stdout + flagged.stderr
    if flagged.returncode == 3 or "An unexpected error has occurred" in out:
        pytest.skip(f"pre-commit could not install the hook environment: {out[-400:]}")
    assert flagged.returncode == 1, out[-3000:]  # an error fails the hook
    assert ".claude/agents/broken.yaml:" in out and " error " in out
    assert ".claude/agents/unknown.md:4:31: warning TOOL-UNKNOWN" in out
    assert ".claude/agents/good.yaml: granted tools: read" in out
    assert "notes.md" not in out
    # warnings alone pass by default, as a linter's do
    warned = run(".claude/agents/good.yaml", ".claude/agents/unknown.md")
    assert warned.returncode == 0, warned.stdout[-2000:]
    assert "Installing environment" not in warned.stdout + warned.stderr  # installed once
    # ... and fail with `args: [--strict]`
    configure(["--strict"])
    strict = run(".claude/agents/good.yaml", ".claude/agents/unknown.md")
    assert strict.returncode == 1, strict.stdout[-2000:]
    assert ".claude/agents/unknown.md:4:31: warning TOOL-UNKNOWN" in strict.stdout
    clean = run(".claude/agents/good.yaml")
    assert clean.returncode == 0, clean.stdout[-2000:]
