"""Run a composite GitHub Action's steps (action.yml) on this machine, as a runner would,
so that tests/project/test_action.py checks what the Action does and not what it says.

Only what action.yml uses is implemented, and anything else is refused (ActionError), so
a step the helper cannot run faithfully fails the test instead of being skipped:
``shell: bash`` steps (run as the runner runs them, ``bash --noprofile --norc -eo
pipefail FILE``); ``${{ }}`` expressions over ``inputs.*`` and ``steps.<id>.outputs.*``
with string literals, ``==``, ``!=``, ``&&`` and ``||``; ``if:`` (a step after a failed
one does not run, as ``success()`` decides); the ``GITHUB_OUTPUT`` (``name=value`` and
``name<<DELIMITER``), ``GITHUB_STEP_SUMMARY``, ``GITHUB_ENV`` and ``GITHUB_PATH`` files;
and the workflow commands a runner reads from a step's output, with ``::stop-commands::``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class ActionError(Exception):
    """action.yml uses something this helper does not run."""


@dataclass(frozen=True)
class Command:
    """A workflow command the runner honours, e.g. ``::error title=T::message``."""

    name: str
    properties: dict[str, str]
    message: str


@dataclass
class StepRun:
    name: str
    id: str | None
    ran: bool
    returncode: int = 0
    log: str = ""  # stdout and stderr, interleaved
    outputs: dict[str, str] = field(default_factory=dict)
    commands: list[Command] = field(default_factory=list)


@dataclass
class ActionRun:
    steps: list[StepRun]
    summary: str
    outputs: dict[str, str]

    @property
    def failed(self) -> bool:
        return any(s.returncode != 0 for s in self.steps if s.ran)

    @property
    def commands(self) -> list[Command]:
        return [c for s in self.steps for c in s.commands]

    def step(self, step_id: str) -> StepRun:
        [found] = [s for s in self.steps if s.id == step_id]
        return found


# -- expressions -----------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\|)"
                    r"|(?P<ref>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*))")


def _tokens(expr: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(expr.rstrip()):
        m = _TOKEN.match(expr, pos)
        if m is None or m.end() == pos:
            raise ActionError(f"unsupported expression: {expr!r} (at {pos})")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _value(kind: str, text: str, context: dict[str, Any]) -> str:
    if kind == "str":
        return text[1:-1].replace("''", "'")
    parts = text.split(".")
    if parts[0] == "inputs" and len(parts) == 2:
        if parts[1] not in context["inputs"]:
            raise ActionError(f"{text}: no such input")
        return str(context["inputs"][parts[1]])
    if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
        return str(context["steps"].get(parts[1], {}).get(parts[3], ""))
    raise ActionError(f"unsupported reference: {text}")


def evaluate(expr: str, context: dict[str, Any]) -> str | bool:
    """One expression: ``a || b || ...`` of ``x && y`` of ``p == q`` / ``p != q`` / ``p``.
    ``||`` and ``&&`` give an operand's value as GitHub does ('' is falsy)."""
    tokens = _tokens(expr)
    alternatives: list[list[list[tuple[str, str]]]] = [[[]]]
    for kind, text in tokens:
        if kind == "op" and text == "||":
            alternatives.append([[]])
        elif kind == "op" and text == "&&":
            alternatives[-1].append([])
        else:
            alternatives[-1][-1].append((kind, text))
    result: str | bool = ""
    for conjunction in alternatives:
        value: str | bool = True
        for comparison in conjunction:
            if len(comparison) == 1:
                value = _value(*comparison[0], context)
            elif len(comparison) == 3 and comparison[1][0] == "op":
                left = _value(*comparison[0], context)
                right = _value(*comparison[2], context)
                # GitHub compares strings case-insensitively
                same = left.lower() == right.lower()
                value = same if comparison[1][1] == "==" else not same
            else:
                raise ActionError(f"unsupported expression: {expr!r}")
            if not value:
                break
        result = value
        if result:
            return result
    return result


def substitute(text: str, context: dict[str, Any]) -> str:
    """``${{ expr }}`` in a value, replaced by its value."""
    def one(m: re.Match[str]) -> str:
        value = evaluate(m.group(1), context)
        return ("true" if value else "false") if isinstance(value, bool) else value
    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def condition(text: str | None, context: dict[str, Any], failed: bool) -> bool:
    if text is None:
        return not failed
    inner = text.strip()
    if inner.startswith("${{") and inner.endswith("}}"):
        inner = inner[3:-2]
    if "(" in inner:
        raise ActionError(f"status functions are not supported: if: {text}")
    return not failed and bool(evaluate(inner, context))


# -- the runner's files and commands -----------------------------------------------------

def read_output_file(path: Path) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIMITER`` ... ``DELIMITER`` blocks."""
    out: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").split("\n") if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            out[name] = "\n".join(lines[i + 1:end])
            i = end + 1
            continue
        if line:
            name, _, value = line.partition("=")
            out[name] = value
        i += 1
    return out


def _unescape(text: str, property_value: bool) -> str:
    text = text.replace("%0D", "\r").replace("%0A", "\n")
    if property_value:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%25", "%")


def workflow_commands(output: str) -> list[Command]:
    """The commands a runner honours in a step's output: a line (leading blanks
    ignored) ``::name props::message``, except between ``::stop-commands::TOKEN`` and
    ``::TOKEN::``."""
    honoured: list[Command] = []
    stopped: str | None = None
    for raw in output.splitlines():
        line = raw.strip()
        if stopped is not None:
            if line == f"::{stopped}::":
                stopped = None
            continue
        m = re.match(r"^::([A-Za-z-]+)(?: ([^:]*))?::(.*)$", line)
        if m is None:
            continue
        name, props, message = m.group(1), m.group(2) or "", m.group(3)
        if name == "stop-commands":
            stopped = message
            continue
        properties = {}
        for pair in filter(None, props.split(",")):
            key, _, value = pair.partition("=")
            properties[key.strip()] = _unescape(value, True)
        honoured.append(Command(name, properties, _unescape(message, False)))
    return honoured


# -- running ---------------------------------------------------------------------------

def copy_checkout(repo: Path, into: Path) -> Path:
    """The files of a git checkout as they are on disk (committed or not, untracked ones
    included, ignored ones left out): what `uses: owner/repo@ref` checks out."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=repo, check=True, capture_output=True)
    for name in sorted({n for n in listed.stdout.decode().split("\0") if n}):
        source, target = repo / name, into / name
        if not source.is_symlink() and not source.is_file():
            continue  # listed but deleted in the working tree
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    return into


def load_action(path: Path) -> dict[str, Any]:
    action = yaml.safe_load(path.read_text(encoding="utf-8"))
    if action.get("runs", {}).get("using") != "composite":
        raise ActionError("only composite actions are run")
    return dict(action)


def run_action(action_path: Path, inputs: dict[str, str], workdir: Path, temp: Path,
               env: dict[str, str] | None = None, timeout: float = 1800) -> ActionRun:
    """Every step of ``action_path/action.yml`` with ``inputs`` (defaults filled in as the
    runner does), in ``workdir`` (the workspace), the runner's files under ``temp``."""
    action = load_action(action_path / "action.yml")
    declared = action.get("inputs") or {}
    unknown = set(inputs) - set(declared)
    if unknown:
        raise ActionError(f"inputs the action does not declare: {sorted(unknown)}")
    values = {name: str(inputs.get(name, spec.get("default", "")))
              for name, spec in declared.items()}
    context: dict[str, Any] = {"inputs": values, "steps": {}}
    temp.mkdir(parents=True, exist_ok=True)
    summary_parts: list[str] = []
    base = {k: v for k, v in (env if env is not None else os.environ).items()
            if not k.startswith(("GITHUB_", "RUNNER_", "INPUT_")) and k != "CI"}
    base.update({"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_ACTION_PATH": str(action_path),
                 "GITHUB_WORKSPACE": str(workdir), "RUNNER_TEMP": str(temp)})
    steps: list[StepRun] = []
    failed = False
    for number, step in enumerate(action["runs"]["steps"]):
        name = str(step.get("name", f"step {number}"))
        if "uses" in step or step.get("shell") != "bash" or "run" not in step:
            raise ActionError(f"step {name!r}: only `shell: bash` run steps are supported")
        record = StepRun(name=name, id=step.get("id"), ran=False)
        steps.append(record)
        if not condition(step.get("if"), context, failed):
            continue
        files = {key: temp / f"{key.lower()}-{number}" for key in
                 ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH")}
        for file in files.values():
            file.write_text("", encoding="utf-8")
        script = temp / f"step-{number}.sh"
        script.write_text(str(step["run"]), encoding="utf-8")
        step_env = {**base, **{k: str(v) for k, v in files.items()},
                    **{k: substitute(str(v), context) for k, v in (step.get("env") or {}).items()}}
        # one stream, as the runner reads a step's log: stop-commands spans both
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                              cwd=workdir, env=step_env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout)
        record.ran, record.returncode, record.log = True, proc.returncode, proc.stdout
        record.commands = workflow_commands(proc.stdout)
        record.outputs = read_output_file(files["GITHUB_OUTPUT"])
        if record.id:
            context["steps"][record.id] = record.outputs
        summary_parts.append(files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8"))
        for key, value in read_output_file(files["GITHUB_ENV"]).items():
            base[key] = value
        for entry in files["GITHUB_PATH"].read_text(encoding="utf-8").splitlines():
            base["PATH"] = f"{entry}{os.pathsep}{base.get('PATH', '')}"
        failed = failed or proc.returncode != 0
    outputs = {name: substitute(str(spec.get("value", "")), context)
               for name, spec in (action.get("outputs") or {}).items()}
    return ActionRun(steps=steps, summary="".join(summary_parts), outputs=outputs)
