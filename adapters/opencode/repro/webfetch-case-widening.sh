#!/usr/bin/env bash
# Finding (new): `tools: {WebFetch: false}` in an OpenCode agent file does not take
# `webfetch` away. OpenCode turns the key into the permission rule `WebFetch: deny`
# (names are matched case-sensitively) and still resolves the tool `webfetch: true`,
# with no warning: a case mismatch that widens a grant the author meant to narrow.
# Direct reproduction, no capconf: OpenCode's own introspection (`opencode debug agent`)
# in a private HOME, no network, no model. Exit 0 = reproduced, 1 = not reproduced.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${CAPCONF_OPENCODE_BIN:-$here/node_modules/opencode-linux-x64/bin/opencode}"
[ -x "$bin" ] || { echo "no OpenCode binary at $bin (run: npm ci --prefix adapters/opencode)" >&2; exit 2; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/proj/.opencode/agent"
cat > "$tmp/proj/.opencode/agent/fetcher.md" <<'AGENT'
---
description: fetches pages, but must not use WebFetch
mode: subagent
tools:
  WebFetch: false
---
Fetch.
AGENT
out="$(cd "$tmp/proj" && env -i PATH="$PATH" HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" \
  XDG_DATA_HOME="$tmp/home/.local/share" XDG_CACHE_HOME="$tmp/home/.cache" \
  XDG_STATE_HOME="$tmp/home/.local/state" OPENCODE_DISABLE_AUTOUPDATE=1 \
  OPENCODE_DISABLE_MODELS_FETCH=1 npm_config_registry=http://127.0.0.1:9/ \
  timeout 120 "$bin" debug agent fetcher --pure 2>/dev/null)"
python3 - "$out" <<'PY'
import json, sys
agent = json.loads(sys.argv[1])
rule = [r for r in agent["permission"] if r["permission"] == "WebFetch"]
tool = agent["tools"].get("webfetch")
print(f"rule for WebFetch: {rule}; resolved tool webfetch: {tool}")
if rule and rule[-1]["action"] == "deny" and tool is True:
    print("REPRODUCED: the deny names `WebFetch`, the granted tool is `webfetch`")
    sys.exit(0)
print("not reproduced")
sys.exit(1)
PY
