"""The one way the simulator opens anything under a root: component by component from an
already opened directory, never following a link out of the root, deciding on what was
opened and acting on that same descriptor (knowledge walk and reads, skill packages and
use_skill references, memory files, built-in read/write/edit, approved writes).

Its race and FIFO cases live with the areas that use it (test_knowledge.py, test_skills.py,
test_approval.py); tests/files/test_escape_races.py races it in the project's own tests.

Requirements: KB-07 SKILL-05 MEM-10 APPR-01
Spec: SPEC.md section 1.1
Suite: conformance/suite/test_approval.py
Golden: (none yet)
"""

from capconf.simulator.files.root import (
    Dir,
    Entry,
    FileAccessError,
    Kind,
    Opened,
    Reason,
    Root,
    read_fd,
)

__all__ = ["Dir", "Entry", "FileAccessError", "Kind", "Opened", "Reason", "Root", "read_fd"]
