"""The values a CI gate is built from are checked before any case runs, and fail closed.

A misspelled feature group in ``--require-features`` used to enforce nothing; an unknown
``--req`` ran nothing and exited 5 without a word; a misspelled case ID in a baseline
was ignored; pytest options after ``--`` could switch the reporting off and exit 0.
Each is now a ``GateError`` that names the bad value and the valid ones, nearest first
(the command exits 2). Pure functions over the values; the command and the plugin call
them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from capconf.conformance import baselines
from capconf.conformance.requirements import requirements

SHOWN = 8


class GateError(Exception):
    """A gate value that cannot be what the user meant; the message says which."""


def nearest_first(bad: str, valid: Iterable[str]) -> list[str]:
    """Every valid value, the most similar to ``bad`` first (case-insensitively),
    ties in name order. (Not the spec's did-you-mean rule, which filters names by a
    cut-off: a gate lists all its values, so the order is what matters.)"""
    folded = bad.casefold()
    return sorted(set(valid), key=lambda v: (
        -difflib.SequenceMatcher(None, folded, v.casefold(), autojunk=False).ratio(), v))


def _unknown(what: str, bad: str, valid: Iterable[str]) -> str:
    ranked = nearest_first(bad, valid)
    shown = ", ".join(ranked[:SHOWN]) + (f", ... ({len(ranked)} in all)"
                                         if len(ranked) > SHOWN else "")
    return f"unknown {what} `{bad}`; valid, nearest first: {shown}"


def feature_groups() -> set[str]:
    return {r.group for r in requirements().values()}


def check_required_features(value: str) -> list[str]:
    """The groups of ``--require-features a,b``; an unknown name is an error."""
    groups = [g.strip() for g in value.split(",") if g.strip()]
    known = feature_groups()
    problems = [_unknown("feature group", g, known - {"core"}) for g in groups
                if g not in known]
    if problems:
        raise GateError("--require-features: " + "; ".join(problems))
    return groups


def check_requirement_ids(ids: Iterable[str]) -> list[str]:
    table = requirements()
    wanted = list(ids)
    problems = [_unknown("requirement", r, table) for r in wanted if r not in table]
    if problems:
        raise GateError("--req: " + "; ".join(problems))
    return wanted


def parse_baseline(text: str, name: str) -> tuple[baselines.Entry, ...]:
    """The entries of a baseline (``baselines.parse``); a line that is not an entry is a
    gate error naming it."""
    try:
        return baselines.parse(text, name).entries
    except baselines.BaselineError as exc:
        raise GateError(f"--expected-failures: {exc}") from None


def check_baseline(entries: Iterable[baselines.Entry], name: str, known: set[str],
                   retired: set[str]) -> frozenset[str]:
    """Every entry must be a case of the suite; a retired or misspelled ID is an error
    (it would otherwise sit in the baseline and silence nothing)."""
    problems = []
    cases = []
    for entry in entries:
        if entry.case in known:
            cases.append(entry.case)
        elif entry.case in retired:
            problems.append(f"{name}:{entry.line}: case `{entry.case}` is retired (it no "
                            "longer exists); remove the line")
        else:
            problems.append(f"{name}:{entry.line}: " + _unknown("case ID", entry.case, known))
    if problems:
        raise GateError("--expected-failures: " + "; ".join(problems))
    return frozenset(cases)


# -- pytest arguments after `--` ---------------------------------------------------------

_OWN_PLUGINS = ("capconf", "capconf.conformance.plugin", "plugin")
_REFUSED_OPTIONS = {
    "-n": "cases share one implementation process and one report; parallel workers "
          "(pytest-xdist) split them and the report loses them",
    "--numprocesses": "see -n",
    "--dist": "see -n",
    "--tx": "see -n",
    "-d": "see -n",
    "--lf": "use `capconf run --lf` (it reruns the failing cases of the previous "
            "--report file)",
    "--last-failed": "use `capconf run --lf`",
    "--ff": "use `capconf run --lf`",
    "--failed-first": "use `capconf run --lf`",
    "--sw": "the suite's pytest has no cache; use `capconf run --lf`",
    "--stepwise": "the suite's pytest has no cache; use `capconf run --lf`",
    "--cache-clear": "the suite's pytest has no cache",
    "--report": "give it before `--`, to `capconf run`",
    "--report-md": "give it before `--`, to `capconf run`",
    "--expected-failures": "give it before `--`, to `capconf run`",
    "--req": "give it before `--`, to `capconf run`",
    "--require-features": "give it before `--`, to `capconf run`",
    "--impl": "give it before `--`, to `capconf run`",
}
_BLOCKED_PLUGINS = {"terminal": "the run's summary is written through it",
                    "python": "no case would be collected"}


def check_pytest_args(extra: list[str]) -> None:
    """Refuse pytest options that would break the run's reporting or make it pass with
    nothing checked."""
    problems: list[str] = []
    args = iter(enumerate(extra))
    for index, arg in args:
        option, _, inline = arg.partition("=")
        if option in _REFUSED_OPTIONS or (option.startswith("-n") and option[2:].isdigit()):
            reason = _REFUSED_OPTIONS.get(option, _REFUSED_OPTIONS["-n"])
            problems.append(f"`{arg}`: {reason}")
            continue
        if option == "-p" or (arg.startswith("-p") and len(arg) > 2):
            plugin = (inline or (extra[index + 1] if index + 1 < len(extra) else "")
                      ) if option == "-p" else arg[2:]
            if option == "-p" and not inline:
                next(args, None)
            name = plugin.removeprefix("no:")
            if plugin.startswith("no:") and (name in _OWN_PLUGINS or name.startswith(
                    "capconf")):
                problems.append(f"`-p {plugin}`: it disables the capconf plugin, so no case "
                                "would be classified or reported")
            elif plugin.startswith("no:") and name in _BLOCKED_PLUGINS:
                problems.append(f"`-p {plugin}`: {_BLOCKED_PLUGINS[name]}")
            elif name.startswith("xdist"):
                problems.append(f"`-p {plugin}`: {_REFUSED_OPTIONS['-n']}")
    if problems:
        raise GateError("pytest arguments after `--`: " + "; ".join(problems))
