// The two fixed tables of the adapter: capconf's canonical registry names -> Gemini CLI's
// tool names (and each tool's argument names), and Gemini's loader messages -> capconf
// diagnostic codes. Why tables: the adapter translates words, it never decides. A name
// that is not a key of the table exactly as written goes to Gemini unchanged (no case
// folding, no trimming), so Gemini's own name check decides what `READ` or `Read` means.

/** capconf canonical name -> Gemini CLI tool name (tools/tool-names.js of core 0.61.0). */
export const TOOL_NAMES = Object.freeze({
  read: 'read_file',
  write: 'write_file',
  edit: 'replace',
  bash: 'run_shell_command',
  glob: 'glob',
  grep: 'grep_search',
  WebFetch: 'web_fetch',
  Task: 'invoke_agent',
  use_skill: 'activate_skill',
});

const REVERSE = Object.freeze(Object.fromEntries(
  Object.entries(TOOL_NAMES).map(([capconf, gemini]) => [gemini, capconf])));

/** The Gemini spelling of a declared name: the table's, or the name exactly as written. */
export function toGemini(name) {
  return Object.hasOwn(TOOL_NAMES, name) ? TOOL_NAMES[name] : name;
}

/** The capconf spelling of a Gemini tool name (its own name when the table has none). */
export function toCapconf(geminiName) {
  return Object.hasOwn(REVERSE, geminiName) ? REVERSE[geminiName] : geminiName;
}

/** Argument names of the registry tools, capconf -> Gemini, per capconf tool. */
export const ARG_NAMES = Object.freeze({
  read: {path: 'file_path', offset: 'offset', limit: 'limit'},
  write: {path: 'file_path', content: 'content'},
  edit: {path: 'file_path', old: 'old_string', new: 'new_string', instruction: 'instruction'},
  bash: {command: 'command', cwd: 'dir_path'},
  glob: {pattern: 'pattern', path: 'dir_path'},
  grep: {pattern: 'pattern', path: 'dir_path'},
  WebFetch: {url: 'prompt', prompt: 'prompt'},
  Task: {subagent: 'agent_name', prompt: 'prompt'},
});

/** Rename argument keys by the table; keys the table does not know pass unchanged. */
export function argsToGemini(capconfTool, args) {
  const table = ARG_NAMES[capconfTool];
  if (!table || args === null || typeof args !== 'object' || Array.isArray(args)) return args;
  const out = {};
  for (const [k, v] of Object.entries(args)) out[Object.hasOwn(table, k) ? table[k] : k] = v;
  // Gemini's `replace` requires an `instruction` (a note for its edit-correction model);
  // capconf's `edit` has none, so the adapter supplies a fixed one (README: "supplied").
  if (capconfTool === 'edit' && !('instruction' in out)) out.instruction = EDIT_INSTRUCTION;
  return out;
}

export const EDIT_INSTRUCTION = 'Replace the exact old text with the new text (capconf edit).';

/** Reverse of argsToGemini, for the summary shown on a card. */
export function argsToCapconf(capconfTool, args) {
  const table = ARG_NAMES[capconfTool];
  if (!table || args === null || typeof args !== 'object') return args;
  const back = Object.fromEntries(Object.entries(table).map(([c, g]) => [g, c]));
  const out = {};
  for (const [k, v] of Object.entries(args)) out[Object.hasOwn(back, k) ? back[k] : k] = v;
  if (capconfTool === 'edit' && out.instruction === EDIT_INSTRUCTION) delete out.instruction;
  return out;
}

/** Gemini's tool Kind (tools/tools.js) -> capconf approval action (SPEC APPR-01). */
export const KIND_TO_ACTION = Object.freeze({
  read: 'read', search: 'read', edit: 'write', delete: 'write', move: 'write',
  execute: 'bash', fetch: 'network', think: 'read', other: 'config-tool',
});
/** For the registry tools the action is the tool itself (capconf: `edit` is its own action). */
export const TOOL_ACTION = Object.freeze({
  read: 'read', glob: 'read', grep: 'read', write: 'write', edit: 'edit', bash: 'bash',
  WebFetch: 'network',
});

/**
 * Gemini loader messages (agents/agentLoader.js: zod issues `path: message`, or whole-file
 * errors) -> capconf diagnostics; lib/diagnostics.mjs splits each zod line into its key
 * path and message first. Each row: a test on the message (and, with `at`, on the zod path
 * joined by `.`) and the code it maps to; the first row that matches wins. Gemini refuses
 * the whole agent for every one of them, so every one is an `error`.
 */
export const LOADER_DIAGNOSTICS = Object.freeze([
  {match: /^Unrecognized key\(s\) in object: (.*)$/, code: 'DEF-UNKNOWN-KEY', keys: true},
  {at: /^tools\.\d+$/, match: /^Invalid tool name/, code: 'TOOL-UNKNOWN'},
  {at: /^name$/, match: /^Name must be a valid slug/, code: 'DEF-BAD-NAME'},
  // SPEC DEF-01: a required key absent, null or "" is DEF-MISSING-KEY at the key
  {at: /^(name|description)$/, match: /^(Required$|Expected string, received null|String must contain at least 1)/, code: 'DEF-MISSING-KEY'},
  {at: /^$/, match: /^Expected object, received/, code: 'DEF-NOT-A-MAPPING', document: true},
  {match: /^Expected [a-z]+, received/, code: 'DEF-TYPE'},
  {match: /^Invalid/, code: 'DEF-TYPE'},
  {match: /Missing mandatory YAML frontmatter/, code: 'DEF-NO-FRONT-MATTER', document: true},
]);

