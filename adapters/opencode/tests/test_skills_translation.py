"""The skills vocabulary (capconf_opencode/skills.py, prompt.py): pure translation, no
OpenCode. Each test names the adapter bug it catches."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from capconf_opencode.definition import FRONT, translate
from capconf_opencode.prompt import prompt_parts
from capconf_opencode.skills import (
    SkillsWorldInvalid,
    parse_skill_world,
    refusal_code,
    use_skill_content,
)


def front(text: bytes) -> dict[str, object]:
    m = FRONT.match(text.decode())
    assert m is not None
    loaded = yaml.safe_load(m.group(1))
    assert isinstance(loaded, dict)
    return loaded


def test_skills_become_the_agent_skill_rule_with_names_as_written() -> None:
    """Catches a folded or dropped name (OpenCode must see `PDF-Tools` as written)."""
    t = translate(b"name: a\ndescription: d\ntools: [read]\nskills: [PDF-Tools, notes]\n"
                  b"prompt: Work.\n", "yaml", None, 1)
    fm = front(t.text)
    assert fm["permission"] == {"*": "deny", "read": "allow",
                                "skill": {"*": "deny", "PDF-Tools": "allow", "notes": "allow"}}
    assert "skills" not in fm


@pytest.mark.parametrize("value", ["[]", ""])
def test_no_declared_skill_adds_no_rule(value: str) -> None:
    """Catches `skills: []` granting the skill tool (PROMPT-03: empty is undeclared)."""
    t = translate(f"name: a\ndescription: d\ntools: [read]\nskills: {value}\n".encode(),
                  "yaml", None, 1)
    assert front(t.text)["permission"] == {"*": "deny", "read": "allow"}


def test_skills_without_tools_still_get_their_rule() -> None:
    """Catches the skill rule lost when `tools` is absent (OpenCode inherits the rest)."""
    t = translate(b"name: a\ndescription: d\nskills: [pdf]\n", "yaml", None, 1)
    assert front(t.text)["permission"] == {"skill": {"*": "deny", "pdf": "allow"}}


def test_layers_keep_capconf_order_and_bad_layers_are_world_errors(tmp_path: Path) -> None:
    """Catches layers passed in the harness's key order, and a typo silently ignored."""
    for name in ("p", "s", "w"):
        (tmp_path / name).mkdir()
    world = parse_skill_world({"layers": {"plugin": str(tmp_path / "p"),
                                          "system": str(tmp_path / "s"), "workspace": "w"}},
                              tmp_path)
    assert world is not None
    assert world.paths() == [str(tmp_path / "w"), str(tmp_path / "s"), str(tmp_path / "p")]
    with pytest.raises(SkillsWorldInvalid) as e:
        parse_skill_world({"layers": {"global": str(tmp_path)}}, tmp_path)
    assert e.value.path == ["args", "skills", "layers", "global"]


def test_opencode_skill_answer_is_read_back_not_rewritten() -> None:
    """Catches a body taken with OpenCode's wrapper, or a location guessed."""
    output = ('<skill_content name="pdf">\n# Skill: pdf\n\nStep one.\n\nStep two.\n\n'
              "Base directory for this skill: /x/pdf\nRelative paths ...\n</skill_content>")
    content = use_skill_content({"output": output, "metadata": {"name": "pdf", "dir": "/x/pdf"}})
    assert content["body"] == "Step one.\n\nStep two."
    assert content["location"] == "/x/pdf/SKILL.md" and content["opencode_output"] == output


def test_only_opencode_refusals_are_not_granted() -> None:
    """Catches any tool error (a ripgrep failure) reported as a refusal."""
    assert refusal_code('Skill "x" not found. Available skills: a') == "SKILL-NOT-GRANTED"
    assert refusal_code("The user has specified a rule which prevents you from using this "
                        "specific tool call.") == "SKILL-NOT-GRANTED"
    assert refusal_code("ripgrep execution failed") is None


def test_prompt_parts_cover_the_prompt_in_opencode_order() -> None:
    """Catches parts that reorder or drop OpenCode's text (the prompt is OpenCode's)."""
    system = ("Work.\nenv\nSkills provide specialized instructions and workflows.\n"
              "Use the skill tool.\n<available_skills>\n  <skill>x</skill>\n"
              "</available_skills>\ntail")
    parts = prompt_parts(system, "Work.")
    assert [p["kind"] for p in parts] == ["body", "frame", "catalog.skills", "frame"]
    assert "".join(p["text"] for p in parts) == system
