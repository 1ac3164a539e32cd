"""Driver op of the skills and knowledge areas: ``skills.resolved``.

Everything a model can do with skills and knowledge goes through ``agent.spawn`` and
``tool.call`` (use_skill, skill_search, kb_search). What the model cannot see but a user
must be able to check (SKILL-01 shadowing, SKILL-07 provenance and pins, SKILL-08
amendment status, the content hash an amendment must be reviewed against) is reported by
this one op, for a spawned agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.protocol.session import Handler, Session
from capconf.simulator.skills.packages import SkillResolution


def op_skills_resolved(session: Session, args: Mapping[str, Any]) -> Any:
    record = session.agent(args)
    outcome = record.view.outcomes.get("skills")
    state = None if outcome is None else outcome.state
    if not isinstance(state, SkillResolution):
        return {"declared": False, "skills": []}
    return {"declared": True, "skills": [s.to_json() for s in state.skills]}


OPS: dict[str, Handler] = {"skills.resolved": op_skills_resolved}
