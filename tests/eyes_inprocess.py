"""An outside tester's proxy, served in-process: ``--impl python:eyes_inprocess:proxy:DIR:BUG``.

The testers' proxies (``tests/fake_impls/eyes*/``) are kept verbatim: a ``Proxy`` runs
``capconf driver`` as a child and lets one named bug rewrite the traffic. Over stdio each
run costs the proxy's interpreter, the driver's interpreter and two pipes per request;
here the same ``Proxy.handle`` and the same bug functions answer, and the line the proxy
would have written to the driver goes to the reference's ``handle_line`` and comes back
as the bytes the driver would have printed (``encode_response``). The argument is the
proxy's folder under ``tests/fake_impls`` and the bug or variant name, with ``:plain``
to drop the opt-in ``reference-text`` group from ``hello`` (round 1's ``--plain``).

The proxy modules import each other by plain name (``bugs``, ``variants``), as the
testers' scripts put their folder on ``sys.path``; so one process serves one folder.
Each ``tests/test_eyes*_proxy.py`` keeps one run over stdio through the real script.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

FAKE_IMPLS = Path(__file__).resolve().parent / "fake_impls"
ROUND_ONE = FAKE_IMPLS / "eyes"  # the proxy machinery every round reuses (proxy_base.py)
# the modules of each folder whose BUGS / VARIANTS tables its proxy.py merges; a folder
# not listed contributes every module that has such a table
TABLE_MODULES = {"eyes": ("bugs", "variants"), "eyes2": ("mybugs", "variants")}

Bug = Callable[[Any, dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]]], Any]
_loaded: dict[str, dict[str, Bug]] = {}


def _table(folder: str) -> dict[str, Bug]:
    """The bug and variant table of ``tests/fake_impls/FOLDER``, as its proxy.py builds it."""
    if folder in _loaded:
        return _loaded[folder]
    if _loaded:
        raise RuntimeError(f"proxy folder {folder!r}: this process already serves "
                           f"{next(iter(_loaded))!r} (their modules share plain names)")
    here = FAKE_IMPLS / folder
    if not here.is_dir():
        raise ValueError(f"no proxy folder {here}")
    for path in (str(ROUND_ONE), str(here)):
        if path not in sys.path:
            sys.path.insert(0, path)
    proxy_base = importlib.import_module("proxy_base")
    names = TABLE_MODULES.get(folder) or tuple(
        p.stem for p in sorted(here.glob("*.py")) if p.stem not in ("proxy", "proxy_base"))
    table: dict[str, Bug] = {"none": proxy_base.identity}
    for name in names:
        module = importlib.import_module(name)
        table.update(getattr(module, "BUGS", {}))
        table.update(getattr(module, "VARIANTS", {}))
    _loaded[folder] = table
    return table


def _plain(fn: Bug) -> Bug:
    """Round 1's ``--plain``: the same answers, without ``reference-text`` in ``hello``."""

    def plain(px: Any, req: dict[str, Any], fwd: Any) -> Any:
        resp = fn(px, req, fwd)
        if req.get("op") == "hello" and resp and resp.get("ok"):
            feats = resp["result"].get("features") or []
            resp["result"]["features"] = [f for f in feats if f != "reference-text"]
        return resp

    plain.__name__ = getattr(fn, "__name__", "plain")
    return plain


class InProcessProxy:
    """``handle(request) -> response`` (and ``handle_line``) around a tester's ``Proxy``
    whose driver is the reference dispatcher in this process."""

    def __init__(self, folder: str, bug: str, plain: bool = False) -> None:
        from capconf.simulator.core.wire import encode_response
        from capconf.simulator.protocol.dispatcher import Dispatcher

        table = _table(folder)
        if bug not in table:
            raise ValueError(f"{folder}: no bug or variant {bug!r}")
        proxy_class = sys.modules["proxy_base"].Proxy
        reference = Dispatcher()

        class Wired(proxy_class):  # type: ignore[misc, valid-type]
            """The tester's proxy with its child pipe replaced by a call."""

            def __init__(self, fn: Bug) -> None:  # Proxy.__init__ minus the Popen
                self.bug = fn
                self.side_id = 900000000
                self.log = None
                self.reset()
                self.state: dict[str, Any] = {}

            def raw(self, line: str) -> str:
                sent = line.rstrip("\n").encode("utf-8", "surrogateescape")
                return encode_response(reference.handle_line(sent)).decode("utf-8")

        self._proxy = Wired(_plain(table[bug]) if plain else table[bug])

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        return self._answer(json.dumps(request, ensure_ascii=False))

    def handle_line(self, line: bytes) -> dict[str, Any]:
        return self._answer(line.decode("utf-8", "surrogateescape"))

    def _answer(self, line: str) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(self._proxy.handle(line))
        return answer


def proxy(argument: str) -> InProcessProxy:
    """The ``python:eyes_inprocess:proxy:FOLDER:BUG[:plain]`` factory."""
    folder, _, rest = argument.partition(":")
    bug, _, flag = rest.partition(":")
    if flag not in ("", "plain"):
        raise ValueError(f"{argument!r}: expected FOLDER:BUG[:plain]")
    return InProcessProxy(folder, bug, plain=flag == "plain")


def impl(folder: str, bug: str, plain: bool = False) -> str:
    """The ``--impl`` value that serves ``bug`` of ``tests/fake_impls/FOLDER`` in-process."""
    return f"python:eyes_inprocess:proxy:{folder}:{bug}{':plain' if plain else ''}"


def load_shared() -> None:
    """For a ``SuiteBatch`` that serves every folder (``suite_runner.SESSION_WARM``): the
    reference and round 1's ``proxy_base``, which every round's proxy reuses; each job
    then imports only its own folder's tables (their plain names clash across folders)."""
    import capconf.simulator.protocol.dispatcher  # noqa: F401

    if str(ROUND_ONE) not in sys.path:
        sys.path.insert(0, str(ROUND_ONE))
    importlib.import_module("proxy_base")
