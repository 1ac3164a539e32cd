"""The runtime-neutral half of a Python capconf driver, shared by the Python adapters
(claude-code, codex, opencode).

Why one package: the JSON Lines framing (``protocol``), the validation of the
`world.setup` arguments every runtime receives alike (``world``) and the request loop
(``serve``) are capconf's protocol, not any runtime's behaviour; three copies drifted
apart by one fix each. Each adapter's ``capconf_*`` package keeps only what says the world
in its runtime's terms. The leading underscore keeps this folder out of the adapter list
(adapters/contract.py, report_compat.py: it is no runtime). An adapter's entry script
puts adapters/ on ``sys.path`` (appended: nothing there shadows an installed module).
``request`` checks the arguments every definition op and `tool.call` carry; ``source`` reads a
definition source the way capconf does (bytes, declared names, YAML 1.2).

It drives no runtime (each runtime is pinned exactly by its own adapter's package.json
and package-lock.json, contract `pinned-install`), but its YAML reading shapes the
adapters' answers, so PyYAML is pinned exactly in requirements.txt, which each Python
adapter's ci installs.
"""
