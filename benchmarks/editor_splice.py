"""How long a form edit takes as a definition grows (the splice parses the document
twice: to locate the field and to check the result).

Run: `python benchmarks/editor_splice.py [--runs 9]`. Prints the median per edit for
documents of about 1 KiB, 64 KiB and 1 MiB (the DEF-03 size limit), LF and CRLF.
"""

from __future__ import annotations

import argparse
import statistics
import time

from capconf.simulator.editor.form import EditField, FormEdit
from capconf.simulator.editor.splice import apply_edit


def document(target: int, newline: str) -> str:
    head = ("---\nname: big  # hand-written\ndescription: 'A long one'\ntools: Read, Grep\n"
            "skills:\n  - a   # first\n  - b\nmodel: sonnet\n---\n\n")
    line = "Review the diff, report each bug with its path and line, and stop.\n"
    body = line * max(1, (target - len(head)) // len(line))
    return (head + body).replace("\n", newline)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    edit = FormEdit(EditField.TOOLS, ["Read", "WebFetch"])
    print("| size | newline | median ms |\n|---|---|---:|")
    for size in (1024, 65_536, 1_000_000):
        for newline, label in (("\n", "LF"), ("\r\n", "CRLF")):
            text = document(size, newline)
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                outcome = apply_edit(text, edit, filename="big.md")
                times.append(time.perf_counter() - start)
                assert outcome.document is not None, outcome.refusal
            print(f"| {len(text.encode()):,} | {label} | {statistics.median(times) * 1000:.1f} |")


if __name__ == "__main__":
    main()
