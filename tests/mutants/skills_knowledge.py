# mypy: disable-error-code="attr-defined,method-assign,assignment,misc"
# (mutants monkeypatch module attributes and imported names on purpose)
"""Broken variants of the skills and knowledge dimensions, each a bug a real runtime could
ship. Each patches the process it is applied in (a dedicated ``capconf driver --mutant
NAME``); ``caught_by`` lists the requirements whose suite cases must fail against it.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from wcmatch import glob as wc_glob

from capconf.simulator.core.dimension import DimensionOutcome
from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.core.mounted import MountedTool
from capconf.simulator.definition.declarations import NameRef
from capconf.simulator.knowledge import dimension as knowledge_dimension
from capconf.simulator.knowledge import kbsearch
from capconf.simulator.skills import amendments as skill_amendments
from capconf.simulator.skills import dimension as skills_dimension
from capconf.simulator.skills import search as skill_search
from mutants.base import Mutant
from mutants.split import ModuleGroup

knowledge = ModuleGroup(*(f"capconf.simulator.knowledge.{m}" for m in (
    "sources", "globs", "walk")))
skills = ModuleGroup(*(f"capconf.simulator.skills.{m}" for m in (
    "packages", "folder", "world", "discovery", "resolution", "catalog", "use_skill",
    "tables")))

# --------------------------------------------------------------------------- knowledge


def _silence(module: Any, attribute: str, code: str) -> None:
    """Wrap a resolver so that it drops every diagnostic of ``code``: the most common
    real bug of all, a problem found and then not reported."""
    real = getattr(module, attribute)

    def resolve(*args: Any, **kwargs: Any) -> Any:
        res = real(*args, **kwargs)
        if res is None:
            return res
        return replace(res, diagnostics=tuple(d for d in res.diagnostics if d.code != code))

    setattr(module, attribute, resolve)


def _kb_51_hits() -> None:
    """Off by one: the cap lets a 51st hit through."""
    kbsearch.HIT_CAP = 51


def _kb_no_budget() -> None:
    """The byte budget is never enforced: a 20 MB file is read whole."""
    kbsearch.BYTE_BUDGET = 1 << 40


def _kb_line_cap_bytes() -> None:
    """The 400 cap counts bytes and has no marker, like a naive `line[:400]`."""

    def display(line: bytes | memoryview, match_at: int) -> tuple[str, bool]:
        raw = bytes(line)
        return raw[:400].decode("utf-8", "replace"), len(raw) > 400

    kbsearch.display_line = display


def _kb_keeps_cr() -> None:
    """CRLF files keep the `\\r` in every hit line."""
    real = kbsearch.display_line

    def display(line: bytes | memoryview, match_at: int) -> tuple[str, bool]:
        text, cut = real(line, match_at)
        return text + "\r", cut

    kbsearch.display_line = display


def _kb_follows_symlinks_out() -> None:
    """Symlinks are resolved but never checked against the workspace root."""
    real_classify = knowledge._classify_link

    def classify_link(root: Any, here: Any, name: str, rel: str, *rest: Any) -> Any:
        found = real_classify(root, here, name, rel, *rest)
        if isinstance(found, knowledge.Skipped) and (
                found.reason is knowledge.SkipReason.SYMLINK_OUTSIDE):
            return knowledge.SourceFile(rel, rel, 0, 0)  # followed like any file
        return found

    def read_file(root: Any, file: Any, limit: int) -> Any:
        try:
            with open(os.path.join(root.real, file.real), "rb") as handle:
                return handle.read(limit), os.fstat(handle.fileno()).st_size
        except OSError:
            return kbsearch.SkipReason.CHANGED

    knowledge._classify_link = classify_link
    kbsearch.read_file = read_file


def _kb_no_glob_rules() -> None:
    """Globs are taken as given: `../x`, `/etc/*`, `~` all accepted at save time."""
    knowledge.check_glob = lambda glob: None
    kbsearch.check_glob = lambda glob: None


def _kb_unstable_ties() -> None:
    """Equal scores come out in reverse path order (e.g. file-system listing order)."""
    real = kbsearch.execute

    def execute(*args: Any, **kwargs: Any) -> kbsearch.KbSearchResult:
        result = real(*args, **kwargs)
        hits = sorted(result.hits, key=lambda h: (-h.terms_matched, -h.occurrences,
                                                  [-b for b in h.path.encode()], h.line))
        return replace(result, hits=tuple(hits))

    kbsearch.execute = execute


def _kb_silent_cut() -> None:
    """The budget is enforced but the result does not say so."""
    real = kbsearch.execute

    def execute(*args: Any, **kwargs: Any) -> kbsearch.KbSearchResult:
        return replace(real(*args, **kwargs), byte_budget_reached=False, cut_file=None,
                       files_not_read=0)

    kbsearch.execute = execute


def _kb_no_read_check() -> None:
    """Knowledge without `read` passes silently: hits the model cannot open."""
    knowledge_dimension.check_knowledge_requires_read = lambda *a, **k: None


def _kb_preloads_files() -> None:
    """The catalog lists every matched file with its first line (content preloaded)."""
    real = knowledge_dimension.knowledge_catalog_section

    def section(resolution: Any) -> str | None:
        text = real(resolution)
        if text is None or resolution is None:
            return text
        lines = []
        for source in resolution.sources:
            for f in knowledge.walk_source(knowledge_dimension_workspace[0],
                                           source.pattern).files:
                with open(f.real, "rb") as handle:
                    first = handle.readline().decode("utf-8", "replace").strip()
                lines.append(f"  - {f.path}: {first}")
        return "\n".join([text, *lines])

    real_compile = knowledge_dimension.KnowledgeDimension.compile

    def compile_(self: Any, definition: Any, world: Any, ctx: Any) -> DimensionOutcome:
        knowledge_dimension_workspace[0] = ctx.workspace
        return real_compile(self, definition, world, ctx)

    knowledge_dimension.knowledge_catalog_section = section
    knowledge_dimension.KnowledgeDimension.compile = compile_


knowledge_dimension_workspace: list[Any] = [None]

# --------------------------------------------------------------------------- skills


def _skill_last_layer_wins() -> None:
    """The layer list is walked backwards: plugin beats workspace."""
    skills.LAYER_ORDER = tuple(reversed(skills.LAYER_ORDER))


def _skill_always_mounted() -> None:
    """use_skill is mounted whether or not `skills` is declared."""
    real = skills_dimension.SkillsDimension.compile

    def compile_(self: Any, definition: Any, world: Any, ctx: Any) -> DimensionOutcome:
        outcome = real(self, definition, world, ctx)
        if not definition.skills:
            tool = skills.USE_SKILL_TOOL
            return replace(outcome, tools=(MountedTool(tool.name, tool.description,
                                                       tool.input_schema),))
        return outcome

    skills_dimension.SkillsDimension.compile = compile_


def _skill_missing_silent() -> None:
    """A declared skill that is nowhere just disappears."""
    _silence(skills_dimension, "resolve_skills", "SKILL-NOT-FOUND")


def _skill_catalog_extra_fields() -> None:
    """The catalog entry carries title and category too (more than three fields)."""
    real = skills_dimension.skills_catalog_section

    def section(resolution: Any) -> str | None:
        text = real(resolution)
        if text is None:
            return None
        for s in resolution.skills:
            text = text.replace(f"- name: {s.package.name}\n",
                                f"- name: {s.package.name}\n  title: {s.package.title}\n")
        return text

    skills_dimension.skills_catalog_section = section


def _skill_hidden_listed() -> None:
    """include_in_prompt is ignored: every granted skill is listed."""
    skills.ResolvedSkill.listed = property(lambda self: True)


def _skill_reference_escape() -> None:
    """References are joined to the folder and read, `..` and symlinks included."""
    real = skills_dimension.call_use_skill

    def call(resolution: Any, args: Any) -> ToolResult:
        if isinstance(args, dict) and isinstance(args.get("reference"), str):
            skill = resolution.find(str(args.get("name", "")))
            if skill is not None:
                try:
                    path = skill.package.folder_path / args["reference"].replace("\x00", "")
                    text = path.read_text("utf-8", "replace")
                except (OSError, ValueError):
                    return real(resolution, args)
                return success({"name": skill.package.name, "reference": args["reference"],
                                "text": text})
        return real(resolution, args)

    skills_dimension.call_use_skill = call


def _skill_search_body() -> None:
    """skill_search also indexes the body."""
    real_rank = skills.rank

    def rank(docs: Any, query: str) -> Any:
        current = _SEARCH_CONTEXT[0]
        if current is not None:
            docs = [skill_search.SearchDoc(
                d.name, d.description + " " + skills.skill_body(
                    (s.package.folder_path / "SKILL.md").read_bytes()))
                for d, s in zip(docs, current.skills, strict=True)]
        return real_rank(docs, query)

    real_call = skills_dimension.call_skill_search

    def call(resolution: Any, args: Any) -> ToolResult:
        _SEARCH_CONTEXT[0] = resolution
        return real_call(resolution, args)

    skills.rank = rank
    skills_dimension.call_skill_search = call


_SEARCH_CONTEXT: list[Any] = [None]


def _skill_search_ties_reversed() -> None:
    """Equal scores are ordered by descending name."""
    real = skills.rank

    def rank(docs: Any, query: str) -> Any:
        ranked = list(real(docs, query))
        ranked.sort(key=lambda r: (-r.score, [-ord(c) for c in docs[r.index].name.casefold()]))
        return tuple(ranked)

    skills.rank = rank


def _skill_pin_grants() -> None:
    """A preferred pin adds the skill to the allow-list."""
    real = skills_dimension.resolve_skills

    def resolve(declared: Any, discovery: Any, world: Any, mode: Any,
                workspace: Any = None) -> Any:
        if declared:
            extra = [NameRef(p, declared[0].location) for p in world.preferred]
            declared = (*declared, *extra)
        return real(declared, discovery, world, mode, workspace)

    skills_dimension.resolve_skills = resolve


def _skill_amendment_always() -> None:
    """Amendments are applied whatever the skill's current content."""

    def evaluate(amendment: Any, current_hash: str) -> Any:
        return skill_amendments.AmendmentOutcome(
            amendment, skill_amendments.AmendmentStatus.APPLIED, current_hash)

    skill_amendments.evaluate = evaluate
    skills.evaluate = evaluate


def _skill_amendment_checked_at_mount() -> None:
    """The amendment verdict taken at mount time is reused when the body changed since."""
    real = skills_dimension.call_use_skill

    def call(resolution: Any, args: Any) -> ToolResult:
        result = real(resolution, args)
        skill = resolution.find(str(args.get("name", ""))) if isinstance(args, dict) else None
        if (result.ok and skill is not None and skill.amendment is not None
                and "reference" not in args
                and skill.amendment.status is skill_amendments.AmendmentStatus.APPLIED):
            content = dict(result.content)
            content["body"] = skill_amendments.apply_outcome(content["body"], skill.amendment)
            content["amendment"] = skill.amendment.to_json()
            return success(content)
        return result

    skills_dimension.call_use_skill = call


def _skill_provenance_all_system() -> None:
    """Every skill without metadata is reported as a system skill."""
    for layer in skills.DEFAULT_PROVENANCE:
        skills.DEFAULT_PROVENANCE[layer] = skills.Provenance.SYSTEM


# --------------------------------------------------------------------------- round 2


def _casefold(name: str) -> str:
    return name.casefold()


def _skill_unicode_casefold() -> None:
    """Skill names compared with Unicode case folding: `\u212ait` (KELVIN SIGN) loads `kit`."""
    skills.ascii_fold = _casefold


def _skill_tools_need_a_resolved_skill() -> None:
    """use_skill/skill_search are mounted only when some declared skill is installed."""
    real = skills_dimension.SkillsDimension.compile

    def compile_(self: Any, definition: Any, world: Any, ctx: Any) -> DimensionOutcome:
        outcome = real(self, definition, world, ctx)
        state = outcome.state
        if state is not None and not state.skills:
            return replace(outcome, tools=())
        return outcome

    skills_dimension.SkillsDimension.compile = compile_


def _skill_reference_rules_reordered() -> None:
    """The reference rules run in another order: `/C:/x` is reported `drive-or-scheme`."""
    skills.REFERENCE_RULES = tuple(reversed(skills.REFERENCE_RULES))


def _skill_missing_reference_is_escape() -> None:
    """A reference that does not exist is reported as an escape attempt."""
    real = skills_dimension.call_use_skill

    def call(resolution: Any, args: Any) -> ToolResult:
        result = real(resolution, args)
        if result.error is not None and result.error.code == "SKILL-REFERENCE-NOT-FOUND":
            return failure("SKILL-REFERENCE-ESCAPE", result.error.message,
                           {**result.error.detail, "reason": "parent-segment"})
        return result

    skills_dimension.call_use_skill = call


class _CaseInsensitiveOs:
    """`os` whose fsencode lower-cases first: folders sorted case-insensitively."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def fsencode(name: str) -> bytes:
        return os.fsencode(name.lower())


def _skill_folders_case_insensitive_order() -> None:
    """Folders of a layer examined in case-insensitive order, so `alpha` beats `Zeta`."""
    real = skills._package_folders
    skills._package_folders = lambda directory: sorted(real(directory), key=str.lower)


def _skill_duplicate_declaration_silent() -> None:
    """A skill declared twice is merged without a word."""
    _silence(skills_dimension, "resolve_skills", "SKILL-DUPLICATE-DECLARATION")


def _skill_search_python_tokens() -> None:
    """The tokenizer is Python's `[^\\W_]+` over `casefold()`: `É` folds to `é`, `—` splits."""
    skill_search.tokenize = lambda text: re.findall(r"[^\W_]+", text.casefold())


def _skill_search_float_score() -> None:
    """Scores are reported as floats (BM25 rounded to 6 decimals), not integers."""
    real = skills.rank

    def rank(docs: Any, query: str) -> Any:
        return tuple(replace(r, score=r.score / 1_000_000)  # type: ignore[arg-type]
                     for r in real(docs, query))

    skills.rank = rank


def _kb_unmounted_when_all_dropped() -> None:
    """kb_search disappears when every declared source was dropped."""
    real = knowledge_dimension.kb_search_tools
    knowledge_dimension.kb_search_tools = (
        lambda res: () if res is not None and not res.sources else real(res))


def _kb_source_names_casefold() -> None:
    """Source names compared with Unicode case folding: `\u212ab` selects `kb`."""
    knowledge.ascii_fold = _casefold
    kbsearch.ascii_fold = _casefold


def _kb_source_names_exact() -> None:
    """Source names compared exactly: `docs` and `DOCS` are two sources."""
    knowledge.ascii_fold = lambda name: name
    kbsearch.ascii_fold = lambda name: name


def _kb_duplicate_blocks_save() -> None:
    """A duplicate source name is a save error (unlike duplicate tools, skills, servers)."""
    knowledge.KB_SOURCE_DUPLICATE = replace(knowledge.KB_SOURCE_DUPLICATE,
                                            save_severity=knowledge.Severity.ERROR)


def _kb_python_split() -> None:
    """Query terms split with Python's str.split (U+001C..U+001F count as spaces)."""
    kbsearch.split_terms = lambda query: query.split()


def _kb_glob_dotglob() -> None:
    """Wildcards and `**` match hidden files and folders (wcmatch DOTGLOB)."""
    knowledge.GLOB_FLAGS = knowledge.GLOB_FLAGS | wc_glob.DOTGLOB


def _kb_glob_nocase() -> None:
    """Globs match case-insensitively (wcmatch IGNORECASE)."""
    knowledge.GLOB_FLAGS = (knowledge.GLOB_FLAGS & ~wc_glob.CASE) | wc_glob.IGNORECASE


def _kb_matches_nothing_silent() -> None:
    """A glob matching no file passes without a word."""
    _silence(knowledge_dimension, "resolve_knowledge", "KB-SOURCE-MATCHES-NOTHING")


def _kb_bad_names_kept() -> None:
    """Any source name is accepted, spaces and colons included."""
    knowledge.file_name_problem = lambda name: None



def _use_skill_cap_in_characters() -> None:
    """The use_skill cap counted in characters: two-byte text passes twice the bytes."""
    def capped(text: str) -> tuple[str, bool, int]:
        total = len(text.encode("utf-8"))
        cut = text[: skills.USE_SKILL_MAX_BYTES]
        return cut, len(cut) < len(text), total

    skills._capped = capped


def _use_skill_no_cap() -> None:
    """use_skill returns any body whole, however large."""
    skills._capped = lambda text: (text, False, len(text.encode("utf-8")))

MUTANTS: tuple[Mutant, ...] = (
    Mutant("use-skill-cap-in-characters", "the use_skill cap counts characters, not bytes",
           ("SKILL-04",), _use_skill_cap_in_characters),
    Mutant("use-skill-no-cap", "use_skill returns any body whole", ("SKILL-04",),
           _use_skill_no_cap),
    Mutant("kb-51-hits", "kb_search returns 51 hits", ("KB-05",), _kb_51_hits),
    Mutant("kb-no-budget", "kb_search reads past 8 MiB", ("KB-04",), _kb_no_budget),
    Mutant("kb-line-cap-bytes", "the 400 cap counts bytes, without a marker", ("KB-06",),
           _kb_line_cap_bytes),
    Mutant("kb-keeps-cr", "CRLF hit lines keep their CR", ("KB-03",), _kb_keeps_cr),
    Mutant("kb-follows-symlinks-out", "symlinks leaving the workspace are followed",
           ("KB-07",), _kb_follows_symlinks_out),
    Mutant("kb-no-glob-rules", "absolute, `..` and `~` globs are accepted at save",
           ("KB-07",), _kb_no_glob_rules),
    Mutant("kb-unstable-ties", "equal scores in reverse path order", ("KB-03",),
           _kb_unstable_ties),
    Mutant("kb-silent-cut", "the byte budget cuts the search without saying so", ("KB-04",),
           _kb_silent_cut),
    Mutant("kb-no-read-check", "knowledge without `read` passes silently", ("KB-08",),
           _kb_no_read_check),
    Mutant("kb-preloads-files", "the catalog lists matched files and their first line",
           ("KB-01", "KB-02"), _kb_preloads_files),
    Mutant("skill-last-layer-wins", "discovery walks the layers backwards", ("SKILL-01",),
           _skill_last_layer_wins),
    Mutant("skill-always-mounted", "use_skill is mounted without `skills`", ("SKILL-02",),
           _skill_always_mounted, also_breaks=("TOOL-02",)),
    Mutant("skill-missing-silent", "a missing skill vanishes without a diagnostic",
           ("SKILL-03",), _skill_missing_silent),
    Mutant("skill-catalog-extra-fields", "catalog entries carry a title line", ("SKILL-04",),
           _skill_catalog_extra_fields),
    Mutant("skill-hidden-listed", "include_in_prompt: false skills are listed", ("SKILL-06",),
           _skill_hidden_listed),
    Mutant("skill-reference-escape", "use_skill follows `..` and symlinks out of the folder",
           ("SKILL-05",), _skill_reference_escape),
    Mutant("skill-search-body", "skill_search indexes bodies", ("SKILL-06",),
           _skill_search_body),
    Mutant("skill-search-ties-reversed", "equal search scores sorted by descending name",
           ("SKILL-06",), _skill_search_ties_reversed),
    Mutant("skill-pin-grants", "a preferred pin grants an undeclared skill", ("SKILL-07",),
           _skill_pin_grants),
    Mutant("skill-provenance-all-system", "skills without metadata all report `system`",
           ("SKILL-07",), _skill_provenance_all_system),
    Mutant("skill-amendment-always", "amendments apply even after the skill changed",
           ("SKILL-08",), _skill_amendment_always),
    Mutant("skill-amendment-checked-at-mount", "the amendment verdict is not re-checked "
           "when the body changes after mounting", ("SKILL-08",),
           _skill_amendment_checked_at_mount),
    Mutant("skill-unicode-casefold", "skill names fold with Unicode case mapping",
           ("SKILL-01",), _skill_unicode_casefold),
    Mutant("skill-tools-need-a-resolved-skill", "skill tools mounted only when a declared "
           "skill is installed", ("SKILL-02",), _skill_tools_need_a_resolved_skill),
    Mutant("skill-reference-rules-reordered", "reference escape reasons in another order",
           ("SKILL-05",), _skill_reference_rules_reordered),
    Mutant("skill-missing-reference-is-escape", "a missing reference is reported as an "
           "escape", ("SKILL-05",), _skill_missing_reference_is_escape),
    Mutant("skill-folders-case-insensitive-order", "a layer's folders sorted "
           "case-insensitively", ("SKILL-01",), _skill_folders_case_insensitive_order),
    Mutant("skill-duplicate-declaration-silent", "a skill declared twice is merged silently",
           ("SKILL-01",), _skill_duplicate_declaration_silent),
    Mutant("skill-search-python-tokens", "skill_search tokenises with Python regex and "
           "casefold", ("SKILL-06",), _skill_search_python_tokens),
    Mutant("skill-search-float-score", "skill_search scores are floats", ("SKILL-06",),
           _skill_search_float_score),
    Mutant("kb-unmounted-when-all-dropped", "kb_search is unmounted when every source is "
           "dropped", ("KB-02",), _kb_unmounted_when_all_dropped),
    Mutant("kb-source-names-casefold", "source names fold with Unicode case mapping",
           ("KB-01", "KB-02"), _kb_source_names_casefold),
    Mutant("kb-source-names-exact", "source names compared case-sensitively",
           ("KB-01", "KB-02"), _kb_source_names_exact),
    Mutant("kb-duplicate-blocks-save", "a duplicate source name is a save error", ("KB-01",),
           _kb_duplicate_blocks_save),
    Mutant("kb-python-split", "query terms split with Python str.split", ("KB-03",),
           _kb_python_split),
    Mutant("kb-glob-dotglob", "globs match hidden files and folders", ("KB-01",),
           _kb_glob_dotglob),
    Mutant("kb-glob-nocase", "globs match case-insensitively", ("KB-01",), _kb_glob_nocase),
    Mutant("kb-matches-nothing-silent", "an empty source is not reported", ("KB-01",),
           _kb_matches_nothing_silent),
    Mutant("kb-bad-names-kept", "invalid source names are accepted", ("KB-01",),
           _kb_bad_names_kept),
)
