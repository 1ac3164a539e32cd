"""How the adapter reuses OpenCode's per-directory instances, without the binary: a stub
stands for `opencode serve`'s HTTP answers. Each test names the adapter bug it is for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from capconf_opencode import agents


class StubServer:
    """Answers GET /agent and POST /instance/dispose from scripted lists."""

    def __init__(self, gets: list[Any], posts: list[Any] | None = None) -> None:
        self.gets, self.posts = list(gets), list(posts or [])
        self.wedged = False
        self.calls: list[str] = []

    def get(self, path: str, directory: str | None = None, timeout: float = 30) -> Any:
        self.calls.append(f"GET {path}")
        return self.gets.pop(0)

    def post(self, path: str, body: Any = None, directory: str | None = None,
             timeout: float = 30) -> Any:
        self.calls.append(f"POST {path}")
        answer = self.posts.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def test_a_dispose_opencode_did_not_confirm_is_reported() -> None:
    """Bug: a dispose answered 503 was taken as done, so the next file loaded in that
    directory was answered by the old instance with the previous file's agent."""
    assert agents.dispose(StubServer([], [True]), Path("/p")) is True  # type: ignore[arg-type]
    refused = StubServer([], [{"__http_error__": 503}])
    assert agents.dispose(refused, Path("/p")) is False  # type: ignore[arg-type]
    assert not refused.wedged
    hung = StubServer([], [TimeoutError()])
    assert agents.dispose(hung, Path("/p")) is False  # type: ignore[arg-type]
    assert hung.wedged


def test_get_agent_503_is_asked_again_and_a_400_is_opencode_s_verdict(monkeypatch: Any) -> None:
    """Bug: OpenCode's server being unavailable (503) was reported as OpenCode refusing
    the file (definition_invalid); a 400 (its config issue for the file) is the verdict."""
    monkeypatch.setattr(agents.time, "sleep", lambda s: None)
    mine = {"name": "a", "native": False, "description": "d"}
    busy = StubServer([{"__http_error__": 503}, [mine]])
    assert agents.find_agent(busy, Path("/p"), "a") == (mine, None)  # type: ignore[arg-type]
    assert busy.calls == ["GET /agent", "GET /agent"]
    refused = StubServer([{"__http_error__": 400, "message": "description: got null"}])
    agent, error = agents.find_agent(refused, Path("/p"), "a")  # type: ignore[arg-type]
    assert agent is None and error == "description: got null"
    assert refused.calls == ["GET /agent"]
    down = StubServer([{"__http_error__": 503}] * 3)
    agent, error = agents.find_agent(down, Path("/p"), "a")  # type: ignore[arg-type]
    assert agent is None and "503" in str(error) and len(down.calls) == 3


def test_an_earlier_file_s_agent_is_never_taken_for_this_one() -> None:
    """Bug (CI, 2026-12-06): after a dispose OpenCode answered GET /agent from the old
    instance, whose one custom agent was the previous file's; the adapter took the one
    custom agent whatever its name, so an empty file was answered with the previous
    case's definition (a 5,000-level `extra`)."""
    earlier = {"name": "deep", "native": False, "prompt": "x"}
    stale = StubServer([[{"name": "build", "native": True}, earlier]])
    agent, error = agents.find_agent(stale, Path("/p"), "agent-147", "")  # type: ignore[arg-type]
    assert agent is None and str(error).startswith(agents.STALE) and "deep" in str(error)
    # the one custom agent under another name that holds this file's body is this file's
    renamed = {"name": "Agent-147", "native": False, "prompt": "Review.\n"}
    same = StubServer([[renamed]])
    assert agents.find_agent(same, Path("/p"), "agent-147", "Review.") == (renamed, None)  # type: ignore[arg-type]


def test_a_load_answered_by_an_instance_with_an_earlier_config_is_stale(tmp_path: Path) -> None:
    """Bug (CI, 2026-12-07): a file OpenCode refuses (`color: x`) was answered with the
    earlier file's agent of the same name and body by an instance OpenCode revived after
    the dispose; nothing in the agent told them apart, the config's marker does."""
    from capconf_opencode.definition import translate
    t = translate(b"name: a\ndescription: d\ncolor: x\nprompt: x\n", "auto", None, 1)
    earlier = {"name": "a", "native": False, "prompt": "x"}
    revived = StubServer([[earlier], {"username": "capconf-load-6"}])
    loaded = agents.load(revived, None, tmp_path, t, marker="capconf-load-7")  # type: ignore[arg-type]
    assert loaded.stale and loaded.agent is None and "capconf-load-6" in str(loaded.error)
    assert revived.calls == ["GET /agent", "GET /config"]  # no session is run on it
