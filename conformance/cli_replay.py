"""`capconf record` and `capconf replay`: a scenario run against an implementation and
written as a log, and a log re-run to its first divergence (``replay``)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from typing import Any

from capconf.conformance import cli_files
from capconf.conformance.cli_common import (
    exchange_with,
    fail,
    open_driver,
    prepare_workspace,
    read_text,
)


def cmd_record(ns: argparse.Namespace) -> int:
    from capconf.conformance import replay

    try:
        scenario = replay.parse_scenario(read_text(ns.scenario, "scenario"))
    except replay.LogError as exc:
        return fail(f"{ns.scenario}:{exc.line}: {exc.message}")
    driver = open_driver(ns)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workspace = prepare_workspace(scenario.files, tmp)
            recording = replay.record(scenario, exchange_with(driver), workspace, ns.impl)
    except replay.NoAnswer as exc:
        return fail(f"recording failed: the implementation {exc.outcome}: {exc.message}", 1)
    finally:
        driver.close()
    try:
        cli_files.write_output(ns.out, replay.render_log(recording), "log")
    except cli_files.InputError as exc:
        return fail(str(exc))
    print(f"recorded {len(recording.steps)} steps to {ns.out}")
    return 0


def cmd_replay(ns: argparse.Namespace) -> int:
    from capconf.conformance import replay

    try:
        recording = replay.parse_log(read_text(ns.log, "log"))
    except replay.LogError as exc:
        return fail(f"{ns.log}:{exc.line}: bad log: {exc.message}")
    driver = open_driver(ns)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workspace = prepare_workspace(recording.files, tmp)
            divergence = replay.replay(recording, exchange_with(driver), workspace)
    finally:
        driver.close()
    if divergence is None:
        print(f"{ns.log}: {len(recording.steps)} steps, identical against {ns.impl}")
        return 0
    sys.stdout.write(replay.describe(divergence, ns.log, ns.impl))
    return 1



def register(sub: Any, impl_options: Any) -> None:
    rec = sub.add_parser("record", help="run a scenario (JSON Lines of requests) and write "
                         "its log for `capconf replay`")
    rec.add_argument("scenario")
    rec.add_argument("--out", required=True, help="the log file to write")
    impl_options(rec)
    rec.set_defaults(handler=cmd_record)

    rep = sub.add_parser("replay", help="re-run a recorded log; exit 0 identical, 1 the "
                         "first divergence, 2 a bad log")
    rep.add_argument("log")
    impl_options(rep)
    rep.set_defaults(handler=cmd_replay)
