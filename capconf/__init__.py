"""capconf: a conformance suite and a reference simulator for capability grants and
delegation in agent runtimes.

The one import name this project installs. Its two halves live in the repository's
top-level folders and are reached through this package:

- ``capconf.simulator`` (folder ``simulator/``): the deterministic reference
  implementation, one package per area of SPEC.md;
- ``capconf.conformance`` (folder ``conformance/``): the implementation-agnostic suite,
  the driver client and the ``capconf`` command.

The two entries here are links to those folders, so the source tree keeps the layout a
reader expects while an installed wheel never claims generic names such as
``simulator`` or ``conformance`` in a user's environment.
"""
