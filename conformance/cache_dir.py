"""Where `capconf run` keeps hypothesis's files: a user cache folder, never the working
directory.

The property cases draw text with hypothesis, which stores its Unicode tables (and, were
a database on, examples) under ``.hypothesis/`` in the current directory by default: a
runtime team's `capconf run` in its own checkout would leave that folder there. The
suite's profiles set no example database, so only those rebuildable tables go here.
An explicit ``HYPOTHESIS_STORAGE_DIRECTORY`` is the user's choice and is kept.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

STORAGE_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"


def cache_home(env: Mapping[str, str], home: Path) -> Path:
    """``$XDG_CACHE_HOME`` when it is an absolute path (the XDG rule: a relative one is
    ignored), else ``~/.cache``."""
    xdg = env.get("XDG_CACHE_HOME", "")
    return Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache"


def hypothesis_storage(env: Mapping[str, str], home: Path) -> Path:
    """The storage folder `capconf run` gives hypothesis under ``env``."""
    if env.get(STORAGE_ENV):
        return Path(env[STORAGE_ENV])
    return cache_home(env, home) / "capconf" / "hypothesis"


def keep_hypothesis_out_of_cwd() -> Path:
    """Point hypothesis (read lazily, at its first file access) at the cache folder for
    this process and the processes it starts; returns the folder."""
    where = hypothesis_storage(os.environ, Path.home())
    os.environ[STORAGE_ENV] = str(where)
    # importing hypothesis here would stop pytest rewriting its plugin's asserts; when
    # something already imported it, its home is set directly as well
    configuration = sys.modules.get("hypothesis.configuration")
    if configuration is not None:
        configuration.set_hypothesis_home_dir(where)
    return where
