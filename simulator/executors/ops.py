"""Driver ops of the executors area (feature group ``executors``): ``exec.setup`` (the
host's executors and workers, the cell's principal), ``exec.run`` (a CLI invocation from
a channel's cell), ``exec.dial`` (a direct connection to a worker's socket)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.compose.session import Handler, ProtocolError, Session
from capconf.simulator.executors.model import Executor, ExecutorWorld, Worker

KEY = "executors"


def _world(session: Session) -> ExecutorWorld:
    found = session.state.get(KEY)
    if not isinstance(found, ExecutorWorld):
        raise ProtocolError("no_executors", "call exec.setup first")
    return found


def _list(args: Mapping[str, Any], key: str) -> list[Any]:
    value = args.get(key, [])
    if not isinstance(value, list):
        raise ProtocolError("bad_request", f"`{key}` must be a list", ("args", key))
    return value


def op_exec_setup(session: Session, args: Mapping[str, Any]) -> Any:
    executors = {}
    for i, row in enumerate(_list(args, "executors")):
        where = ("args", "executors", i)
        if not (isinstance(row, dict) and isinstance(row.get("name"), str)
                and isinstance(row.get("worker"), str)
                and isinstance(row.get("methods", {}), dict)):
            raise ProtocolError("bad_request", "an executor is {name, worker, provisioned, "
                                "channels, connector?, methods, shortcuts?}", where)
        shortcuts = row.get("shortcuts", {})
        if not isinstance(shortcuts, dict) or any(
                not k.startswith("+") or v not in row.get("methods", {})
                for k, v in shortcuts.items()):
            raise ProtocolError("bad_request", "shortcuts map `+name` to a method",
                                (*where, "shortcuts"))
        executors[row["name"]] = Executor(row["name"], bool(row.get("provisioned", True)),
                                          frozenset(row.get("channels", [])), row["worker"],
                                          row.get("connector"), row.get("methods", {}),
                                          shortcuts)
    workers = {}
    for i, row in enumerate(_list(args, "workers")):
        if not (isinstance(row, dict) and isinstance(row.get("name"), str)
                and isinstance(row.get("acl"), list)):
            raise ProtocolError("bad_request", "a worker is {name, acl: [principal]}",
                                ("args", "workers", i))
        workers[row["name"]] = Worker(row["name"], frozenset(row["acl"]))
    connected = args.get("connected", {})
    if not isinstance(connected, dict):
        raise ProtocolError("bad_request", "`connected` maps connector ids to booleans",
                            ("args", "connected"))
    broker = args.get("broker", "broker")
    if not isinstance(broker, str):
        raise ProtocolError("bad_request", "`broker` must be a principal name", ("args", "broker"))
    session.state[KEY] = ExecutorWorld(executors, workers, dict(connected), broker)
    return {"executors": sorted(executors), "workers": sorted(workers)}


def op_exec_run(session: Session, args: Mapping[str, Any]) -> Any:
    argv = args.get("argv", [])
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ProtocolError("bad_request", "`argv` must be a list of strings", ("args", "argv"))
    return _world(session).run(str(args.get("channel")), str(args.get("executor")),
                               argv).to_json()


def op_exec_dial(session: Session, args: Mapping[str, Any]) -> Any:
    params = args.get("params", {})
    if not isinstance(params, dict):
        raise ProtocolError("bad_request", "`params` must be an object", ("args", "params"))
    return _world(session).dial(str(args.get("principal")), str(args.get("worker")),
                                str(args.get("method")), params).to_json()


OPS: dict[str, Handler] = {"exec.setup": op_exec_setup, "exec.run": op_exec_run,
                           "exec.dial": op_exec_dial}
