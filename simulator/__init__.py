"""capconf reference simulator: a deterministic implementation of the capability model.

The model is pure functions and immutable values (sans-IO, like h11); file-system and
stdio access live at the edges. One package per area of SPEC.md, each with the same
face (what a definition declares, how it resolves with diagnostics, its catalog section,
its mounted tools, its driver ops), and a docstring naming its requirement IDs, its
SPEC.md section, its conformance suite files and its golden folder:

    core/          names, diagnostics, envelope, mounted tools, wire rules (knows no area)
    compose/       world, compiling a definition, the session and its live agents
    protocol/      PROTO   dispatcher, core ops, the op tables, stdio framing
    definition/    DEF     the document: YAML source, declarations, parse/save, serialise
    tools/         TOOL    registry, tool catalog, grant resolution
    prompt/        PROMPT  frame -> catalog -> body
    editor/        EDIT    selector candidates, form edits as splices, unknown names
    call/          CALL    stamping, hand-offs, embed tokens (envelope in core)
    builtin_tools/         read, write, edit, bash effects behind the approval gate
    skills/        SKILL   packages, layered discovery, use_skill, skill_search
    knowledge/     KB      sources, catalog, kb_search
    mcp/           MCP     fake servers, client, scoped gateway
    approval/      APPR    the decision table, cards, the chain
    memory/        MEM     modes, binding, resident section, tools, appends
    delegation/    DELEG   implementers, lineage, permissions pinned at the boundary
    flow/          FLOW    workflows in a restricted worker, fixed-script iteration
    namespaces/    NS      namespaces and deferred loading
    connectors/    CONN    connectors from manifest data, permissions, quotas, lifecycle
    executors/     BIN     provisioned / revealed / usable, one CLI contract, two walls
    files/                 the one way to open anything under a root

``areas`` lists the dimensions in catalog order, for ``compose``; ``spec_tables``
regenerates SPEC.md's tables from the code tables.
"""

SPEC_VERSION = "0.1.0"
IMPLEMENTATION_NAME = "capconf-reference-simulator"
