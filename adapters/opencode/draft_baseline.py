"""Draft expected-failures lines from a `capconf run --report` JSONL of this adapter.

Why: every failing case needs a reviewed reason; the draft groups failures by what the
run's reason says OpenCode did, with the docs or code that show it, so the reviewer reads
one rule per kind of failure instead of 100 lines. The output is reviewed, then committed
as expected-failures.txt; it is never written into CI's baseline automatically.

    python adapters/opencode/draft_baseline.py report.jsonl > draft.txt
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FAILING = {"failed", "errored", "crashed", "timed out", "expected failure"}

# (substring of the case's reason, the annotation) -- first match wins
RULES: list[tuple[str, str]] = [
    ("no save-mode validation", "kind b: design choice: OpenCode has no save mode; an agent "
     "file is loaded as it is, never validated for saving (docs: opencode.ai/docs/agents)"),
    ("'NoneType' object is not subscriptable", "kind b: design choice: OpenCode refuses the "
     "whole agent file when a value does not fit its schema (a null `description`, a "
     "non-name entry), so nothing is loaded to normalise (code: config/agent schema)"),
    ("not_grantable", "kind b: design choice: OpenCode has no registry of deliberately "
     "absent tools; a name it does not know is just a permission rule that matches nothing"),
    ("mcp-style", "kind b: design choice: OpenCode has no `mcp-style` class: MCP tools are "
     "`server_tool` ids gated by permission globs like any other (docs: mcp-servers)"),
    ("('Read', None", "kind b: design choice: permission names are matched to OpenCode's "
     "lower-case tool ids case-sensitively, so `Read` grants nothing (docs: permissions)"),
    ("TOOL-02 | (", "kind b: design choice: permission names are matched to OpenCode's "
     "lower-case tool ids case-sensitively (docs: permissions)"),
    ("RecursionError", "kind b: design choice: OpenCode sets no depth limit of its own "
     "that the suite's 32-level rule could check"),
    ("ns.setup", "kind b: design choice: OpenCode has no request stamps, hand-offs or "
     "option cards: a tool call is one model step of a session (CALL-01/02/04 have no "
     "counterpart; docs: opencode.ai/docs/tools)"),
    ("GET /agent within", "kind a: new (repro: repro/yaml-alias-bomb.py): OpenCode's agent "
     "loader expands YAML aliases without a bound and stops answering"),
    ("TimeoutError", "kind a: new (repro: repro/yaml-alias-bomb.py): OpenCode's agent "
     "loader expands YAML aliases without a bound and stops answering"),
    ("definition.save", "kind b: design choice: OpenCode has no save mode; an agent file is "
     "loaded as it is, never validated for saving (docs: opencode.ai/docs/agents)"),
    ("mode save", "kind b: design choice: OpenCode has no save mode (docs: agents)"),
    ("'mode': 'save'", "kind b: design choice: OpenCode has no save mode (docs: agents)"),
    ("builtins.", "kind b: design choice: OpenCode's built-in agents are not read-only "
     "documents to list or copy; a file with the same name overrides one (docs: agents)"),
    ("DEF-", "kind b: design choice: OpenCode's agent loader reports no located "
     "diagnostics (no missing-key, misspelled-key, bad-name, duplicate or syntax codes): a "
     "file loads or is skipped (code: config/agent schema; docs: agents)"),
    ("no diagnostic matches", "kind b: design choice: OpenCode's agent loader reports no "
     "located diagnostics: unknown tool names and keys are accepted silently (a permission "
     "key is a free string; unknown keys go to `options`) (code: config/agent schema)"),
    ("TOOL-UNKNOWN", "kind b: design choice: no diagnostics from OpenCode's loader; an "
     "unknown permission name is accepted silently (code: config/agent schema)"),
    ("statuses", "kind b: design choice: OpenCode matches permission names to tool ids "
     "case-sensitively and has no notion of not-grantable/not-in-session rows"),
    ("prompt", "kind b: design choice: OpenCode's system prompt puts the agent's prompt "
     "first and its own environment text after it; it takes no frame from the host"),
    ("PROMPT-01", "kind b: design choice: OpenCode's system prompt is the agent's prompt "
     "followed by its own environment text, joined by one newline; the host's frame is "
     "not taken (docs: agents `prompt`)"),
    ("granted tools", "kind b: design choice: permission names are matched to OpenCode's "
     "lower-case tool ids case-sensitively (`Read`, `WEBFETCH` grant nothing), `write` is "
     "gated by the `edit` permission, and OpenCode has no TaskStop/skill/kb/memory/mcp "
     "gateway tools (docs: opencode.ai/docs/permissions, /docs/tools)"),
]


# the skills cases (skills.py), matched on the case's cause and reason, before RULES
SKILL_RULES: list[tuple[str, str]] = [
    ("skills.offer_preference", "kind b: design choice: OpenCode has no skill preferences, "
     "offers or pins: a skill is loaded when the model asks for it (docs: skills)"),
    ("skills.set_preferred", "kind b: design choice: OpenCode has no skill preferences, "
     "offers or pins: a skill is loaded when the model asks for it (docs: skills)"),
    ("skills.preferences", "kind b: design choice: OpenCode has no skill preferences, "
     "offers or pins: a skill is loaded when the model asks for it (docs: skills)"),
    ("skills.resolved", "kind b: design choice: OpenCode reports no per-agent resolution "
     "(layer, shadowing, provenance, pins, amendments, gates): its discovery keeps one skill "
     "per name, the one whose parse finished last (#32202), and lists an agent's skills only "
     "in its system prompt "
     "(code: skill/index.ts loadSkills)"),
    ("skill_search", "kind b: design choice: OpenCode has no skill search; an agent's skills "
     "are listed in its system prompt (`<available_skills>`) and loaded by name with the "
     "`skill` tool (code: tool/skill.ts)"),
    ("PROMPT-01", "kind b: design choice: OpenCode's system prompt is the agent's prompt, "
     "then its environment text, then its skills catalog (`<available_skills>`); the host's "
     "frame is not taken, so the body is not last (code: session/system.ts)"),
    ("'truncated'", "kind b: design choice: OpenCode's skill tool returns the whole body, "
     "trimmed, with no size cap and no truncation flag (code: tool/skill.ts)"),
    ("input_schema", "kind b: design choice: OpenCode's skill tool takes `{name}` only (no "
     "reference argument, extra keys not refused) and there is no skill_search (code: "
     "tool/skill.ts)"),
    ("tools.mounted", "kind b: design choice: OpenCode's skill tool takes `{name}` only (no "
     "reference argument, extra keys not refused) and there is no skill_search (code: "
     "tool/skill.ts)"),
    ("not found. Available skills", "kind b: design choice: OpenCode reads a skill's "
     "metadata only from SKILL.md front matter; a folder package (`skill.yaml` + a SKILL.md "
     "without front matter) is no skill to it (code: skill/index.ts)"),
    ("definition.parse", "kind b: design choice: OpenCode's skill discovery reports nothing "
     "to a definition: a missing, duplicate, invalid or shadowed skill is no diagnostic (a "
     "failed parse is only logged) (code: skill/index.ts)"),
    ("| 'granted' |", "kind b: design choice: OpenCode refuses a skill with its own error "
     "text (denied by the agent's `skill` rule, or not found with every discovered name, "
     "README finding 5); it lists no granted skills (code: tool/skill.ts)"),
    ("use_skill", "kind b: design choice: OpenCode's skill tool takes a name only: a "
     "`reference` is ignored and the body is returned (reference files are read with "
     "`read`); names match exactly (case-sensitive) and the body is trimmed (code: "
     "tool/skill.ts)"),
]


TRIM = ("kind b: design choice: OpenCode trims an agent file's body with JavaScript's "
        "`trim` (`prompt: md.content.trim()`): a first line loses its indentation, and "
        "trailing whitespace is JavaScript's set, not Unicode White_Space (U+0085 is kept, "
        "and with it the U+3000 before it) (code: config/agent.ts load)")

# by case ID prefix, first of all: the area OpenCode has nothing of, and single cases
# whose run reason names no OpenCode behaviour the rules below could match
CASE_RULES: list[tuple[str, str]] = [
    ("skill.flags.", "kind b: design choice: OpenCode returns a skill's body as written: no "
     "feature-flag sections, no flag report, no amendments (code: tool/skill.ts)"),
    ("skill.reference.", "kind b: design choice: OpenCode's skill tool takes a name only: a "
     "`reference` argument is ignored and the body is returned (the model reads a "
     "skill's files with `read`, under read's own permission) (code: tool/skill.ts)"),
    ("skill.gate.", "kind b: design choice: OpenCode has no VM types or availability gates "
     "for skills (docs: skills)"),
    ("tool.dimension-tool.", "kind b: design choice: OpenCode's agent loader reports no "
     "statuses or diagnostics: `use_skill` in `tools` is a permission key that matches no "
     "OpenCode tool, silently (code: config/agent schema)"),
    ("appr.link-planted-same-class.", "kind a: new, related to #40160 (repro: "
     "repro/link-planted-redirects-within-class.py): OpenCode resolves the path again when "
     "the approved call runs and follows a link planted while the ask waited, so the call "
     "acts on the file the link points to"),
    ("appr.tier.link-dot-dot-resolved-on-disk", "kind b: design choice: OpenCode resolves a "
     "tool's path lexically (Node's `path.resolve` collapses `link/..` before any link is "
     "looked at) and acts on that same path: `write link/../x.txt` writes the workspace's "
     "own `x.txt`, unasked, where the spec's realpath order names the file next to the "
     "link's target, outside (code: tool/write.ts; measured on 1.18.33: the workspace's "
     "x.txt written, nothing outside)"),
    ("def.body.first-line-indent-kept.yaml", TRIM),
    ("def.body.white-space-is-unicodes", TRIM),
    ("def.bytes.lone-cr-in-body", "kind b: design choice: OpenCode reads an agent file's body "
     "as written, line endings included: a lone CR is kept, never read as LF (code: "
     "config/markdown.ts, gray-matter; config/agent.ts load)"),
    ("def.bytes.lone-cr-markdown", "kind b: design choice: OpenCode's front matter reader "
     "(gray-matter) closes front matter only at a `\\n---` line, so a file whose lines end "
     "in CR alone has no front matter to it: OpenCode loads it with no description, an "
     "empty prompt and every tool (code: config/markdown.ts; measured with the raw file on "
     "1.18.33)"),
    ("skill.names.use-skill-name-trimmed", "kind b: design choice: OpenCode's skill tool looks "
     "a name up exactly as given, untrimmed and case-sensitive: ` \\tPDF ` is \"not found\" "
     "(code: tool/skill.ts)"),
]


def annotate(reason: str, case: str = "") -> str:
    for prefix, note in CASE_RULES:
        if case.startswith(prefix):
            return note
    if case.startswith("skill."):
        for needle, note in SKILL_RULES:
            if needle in reason:
                return note
    for needle, note in RULES:
        if needle in reason:
            return note
    return "kind ?: not classified: " + " ".join(reason.split())[:160]


def main(argv: list[str]) -> int:
    # JSON Lines ends lines with \n only: a reason may hold U+0085 or U+2028, which
    # str.splitlines() would take for line breaks
    text = Path(argv[1]).read_text(encoding="utf-8")
    rows = [json.loads(x) for x in text.split("\n") if x.strip()]
    cases = [r for r in rows if r.get("type") == "case" and r.get("outcome") in FAILING]
    width = max((len(r["case"]) for r in cases), default=0) + 3
    for r in sorted(cases, key=lambda r: r["case"]):
        text = f"{r.get('cause', '')} | {r.get('reason', '')} | {json.dumps(r.get('got'))}"
        print(f"{r['case']:<{width}}# {annotate(text, r['case'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
