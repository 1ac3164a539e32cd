"""Driver ops of the skills and knowledge areas.

Everything a model can do with skills and knowledge goes through ``agent.spawn`` and
``tool.call`` (use_skill, skill_search, kb_search). What the model cannot see but a user
must be able to check (SKILL-01 shadowing, SKILL-07 provenance and pins, SKILL-08
amendment status, SKILL-10 gates, the content hash an amendment must be reviewed against)
is reported by ``skills.resolved``, for a spawned agent.

SKILL-09's preferences are session state that only the user and the runtime's task
bookkeeping change, never a model: ``skills.offer_preference`` is the driver reporting how
a task ended (the simulator answers whether the runtime may offer to set a preference now),
``skills.set_preferred`` is the user accepting, ``skills.preferences`` shows the state.
The state is part of the world value; agents spawned afterwards see it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from capconf.simulator.compose.session import Handler, ProtocolError, Session
from capconf.simulator.core.names import ascii_fold, trim_name
from capconf.simulator.skills.preferences import (
    Preference,
    PreferenceKind,
    PreferenceState,
    TaskEvent,
    decide_offer,
)
from capconf.simulator.skills.resolution import SkillResolution
from capconf.simulator.skills.world import SkillWorld


def op_skills_resolved(session: Session, args: Mapping[str, Any]) -> Any:
    record = session.agent(args)
    outcome = record.view.outcomes.get("skills")
    state = None if outcome is None else outcome.state
    if not isinstance(state, SkillResolution):
        return {"declared": False, "skills": []}
    return {"declared": True, "skills": [s.to_json() for s in state.skills]}


def _skill_world(session: Session) -> SkillWorld:
    world = session.require_world()
    skills = world.dimensions["skills"]
    assert isinstance(skills, SkillWorld)
    return skills


def _store(session: Session, state: PreferenceState) -> None:
    world = session.require_world()
    skills = replace(_skill_world(session), preference_state=state)
    session.world = replace(world, dimensions={**world.dimensions, "skills": skills})


def _text(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not trim_name(value):
        raise ProtocolError("bad_request", f"`{key}` must be a non-empty string",
                            ("args", key))
    return trim_name(value)


def _choice(args: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = args.get(key)
    if value not in allowed:
        raise ProtocolError("bad_request", f"`{key}` must be one of {', '.join(allowed)}",
                            ("args", key))
    assert isinstance(value, str)
    return value


def _status(pref: Preference, session: Session, args: Mapping[str, Any]
            ) -> dict[str, Any]:
    """Whether a skill preference points at something this agent can use. It never
    changes what the agent can use: a preference is not a grant."""
    row = pref.to_json()
    if pref.kind is PreferenceKind.CONNECTOR:
        # usability of a connector is the connector area's (CONN); recorded here only
        return {**row, "status": "recorded", "reason": None}
    record = session.agent(args)
    outcome = record.view.outcomes.get("skills")
    resolution = None if outcome is None else outcome.state
    declared = [] if record.view.definition is None else [
        r.name for r in record.view.definition.skills or ()]
    key = ascii_fold(pref.name)
    if not any(ascii_fold(trim_name(d)) == key for d in declared):
        return {**row, "status": "not-granted", "reason": None}
    skill = resolution.find(pref.name) if isinstance(resolution, SkillResolution) else None
    if skill is None:
        return {**row, "status": "not-found", "reason": None}
    if skill.unavailable is not None:
        return {**row, "status": "unavailable", "reason": str(skill.unavailable)}
    return {**row, "status": "active", "reason": None}


def op_skills_preferences(session: Session, args: Mapping[str, Any]) -> Any:
    """The session's preferences and asked task types; with `agent`, the preferences that
    agent was spawned with, each with its status for that agent."""
    if "agent" not in args:
        state = _skill_world(session).preference_state
        return {"preferences": [p.to_json() for p in state.preferences],
                "offers_asked": list(state.offers_asked)}
    record = session.agent(args)
    outcome = record.view.outcomes.get("skills")
    resolution = None if outcome is None else outcome.state
    state = (resolution.preferences if isinstance(resolution, SkillResolution)
             else _skill_world(session).preference_state)
    return {"preferences": [_status(p, session, args) for p in state.preferences],
            "offers_asked": list(state.offers_asked)}


def op_skills_offer_preference(session: Session, args: Mapping[str, Any]) -> Any:
    """The driver reports how a task ended; the answer says whether the runtime may offer
    to set a preference for its task type now (and records the offer)."""
    task_type = _text(args, "task_type")
    event = TaskEvent(_choice(args, "event", tuple(e.value for e in TaskEvent)))
    decision, state = decide_offer(_skill_world(session).preference_state, task_type, event)
    _store(session, state)
    return decision.to_json()


def op_skills_set_preferred(session: Session, args: Mapping[str, Any]) -> Any:
    """The user sets (or replaces) the first choice for a task type."""
    task_type = _text(args, "task_type")
    kind = PreferenceKind(_choice(args, "kind", tuple(k.value for k in PreferenceKind)))
    name = _text(args, "name")
    state = _skill_world(session).preference_state
    previous = state.for_task(task_type)
    _store(session, state.with_preference(Preference(task_type, kind, name)))
    return {"preference": Preference(task_type, kind, name).to_json(),
            "replaced": None if previous is None else previous.to_json()}


OPS: dict[str, Handler] = {
    "skills.resolved": op_skills_resolved,
    "skills.preferences": op_skills_preferences,
    "skills.offer_preference": op_skills_offer_preference,
    "skills.set_preferred": op_skills_set_preferred,
}
