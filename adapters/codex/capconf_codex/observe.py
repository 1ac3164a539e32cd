"""One observation: the real `codex exec` runs a scripted lineage, the adapter watches.

Why a lineage replay: an agent capconf talks about is a Codex subagent, a thread the
root spawned with `spawn_agent {agent_type, message}` (and, for a deeper one, a thread
that thread spawned). Each observation writes a fresh CODEX_HOME (the world's config, the
role files), and the scripted model plays every thread: each ancestor spawns the next
and waits for it; the last one (the agent observed) does what the op asks. What Codex
sent the model (the agent's `tools`, its `developer` input, each tool output) and what
it answered each `spawn_agent` is the observation; the adapter decides nothing.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .model_server import Action, Call, Say, Script, ScriptedModel
from .role import Role
from .runtime import Homes, Run, base_config, run_exec
from .vocabulary import MULTI_AGENT_NS

_tokens = itertools.count(1)
# Codex's own notice that it does not know the adapter's model name (expected: the
# adapter's model is scripted); every other message Codex prints is kept
NOISE = ("Model metadata for",)


@dataclass
class Hop:
    """One thread of the replayed lineage: the role it is spawned as, and its script."""

    agent_type: str
    actions: list[Action] = field(default_factory=list)


@dataclass
class Observation:
    run: Run
    spawn_outputs: list[str | None]
    scripts: list[Script]

    @property
    def target(self) -> Script:
        return self.scripts[-1]

    def loaded(self) -> bool:
        """Codex spawned the last hop and its thread made a request."""
        return bool(self.target.seen) and self.target.seen[0].subagent is not None

    def messages(self) -> list[str]:
        return [m for m in self.run.messages() if not m.startswith(NOISE)]


def agent_id(output: str | None) -> str | None:
    try:
        v = json.loads(output or "")
    except ValueError:
        return None
    return str(v["agent_id"]) if isinstance(v, dict) and "agent_id" in v else None


def _spawn_then_wait(agent_type: str, token: str,
                     after: Callable[[str | None], Action] | None = None) -> list[Action]:
    def wait(out: str | None) -> Call | Say:
        aid = agent_id(out)
        if aid is None:
            return Say("spawn refused")
        return Call("wait_agent", {"targets": [aid]}, MULTI_AGENT_NS)
    return [Call("spawn_agent", {"agent_type": agent_type,
                                 "message": f"capconf-turn:{token}"}, MULTI_AGENT_NS), wait]


def observe(binary: Path, model: ScriptedModel, homes: Homes, workspace: Path,
            roles: list[Role], chain: list[Hop], agents_limits: dict[str, int] | None = None,
            flags: list[str] | None = None, extra_config: str = "",
            root_actions: list[Action] | None = None,
            skill_layers: list[tuple[str, Path]] | None = None) -> Observation:
    """Run the root and `chain` (root spawns chain[0], which spawns chain[1], ...).
    `root_actions` instead of a chain: the root's own script (an agent at depth 0)."""
    home = homes.new()
    try:
        (home / "config.toml").write_text(base_config(model.port, agents_limits, extra_config))
        if skill_layers:
            (home / "skills").mkdir()
            for name, path in skill_layers:
                (home / "skills" / name).symlink_to(path, target_is_directory=True)
        for role in roles:
            (home / "agents" / f"{role.stem}.toml").write_text(role.toml, encoding="utf-8")
        tokens = [f"t{next(_tokens)}" for _ in range(len(chain) + 1)]
        scripts: list[Script] = []
        for i in range(len(chain) + 1):
            if i < len(chain):
                acts = _spawn_then_wait(chain[i].agent_type, tokens[i + 1])
                if i > 0:
                    acts = list(chain[i - 1].actions) + acts
            else:
                acts = list(chain[i - 1].actions) if chain else list(root_actions or [])
            scripts.append(model.register(tokens[i], acts))
        run = run_exec(binary, home, workspace, f"capconf-turn:{tokens[0]}", flags)
        spawn_outputs = [s.outputs[1] if len(s.outputs) > 1 else None for s in scripts[:-1]]
        return Observation(run, spawn_outputs, scripts)
    finally:
        shutil.rmtree(home, ignore_errors=True)
