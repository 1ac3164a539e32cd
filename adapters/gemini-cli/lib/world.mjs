// Validation of `world.setup` (SPEC PROTO-02): protocol plumbing, so that a harness whose
// setting would be ignored hears so. The registry it describes is in capconf's words; the
// adapter hands Gemini the Gemini names of the session's granted tools (`coreTools`).

import * as fs from 'node:fs';
import * as path from 'node:path';
import {ProtocolError} from './runtime.mjs';
import {toCapconf} from './vocabulary.mjs';

const KEYS = new Set(['workspace', 'frame', 'grantable', 'not_grantable', 'session_tools',
  'builtins', 'skills', 'knowledge', 'mcp', 'memory']);
export const LEGACY_SIX = ['bash', 'read', 'write', 'edit', 'glob', 'grep'];

const invalid = (message, at) => new ProtocolError('world_invalid', message, ['args', ...at]);

function names(value, key) {
  if (!Array.isArray(value)) throw invalid(`\`${key}\` must be a list of names`, [key]);
  value.forEach((n, i) => {
    if (typeof n !== 'string') throw invalid(`\`${key}\` entry ${i} is not a string`, [key, i]);
  });
  return value;
}

function rows(value, key, fields) {
  if (!Array.isArray(value)) throw invalid(`\`${key}\` must be a list`, [key]);
  value.forEach((row, i) => {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) throw invalid(`\`${key}\` row ${i} is not an object`, [key, i]);
    for (const f of fields) {
      if (typeof row[f] !== 'string') throw invalid(`\`${key}\` row ${i} lacks the string \`${f}\``, [key, i, f]);
    }
    for (const f of Object.keys(row)) {
      if (!fields.includes(f)) throw invalid(`\`${key}\` row ${i} has the unknown field \`${f}\``, [key, i, f]);
    }
  });
  return value;
}

/** Gemini's own registry in capconf's words (a name the table lacks keeps Gemini's spelling). */
export function ownRegistry(core) {
  return core.ALL_BUILTIN_TOOL_NAMES
    .filter((n) => n !== core.COMPLETE_TASK_TOOL_NAME)
    .map(toCapconf);
}

export function validateWorld(core, args) {
  for (const key of Object.keys(args)) {
    if (!KEYS.has(key)) throw invalid(`unknown world key \`${key}\``, [key]);
  }
  const ws = args.workspace;
  if (typeof ws !== 'string' || !path.isAbsolute(ws)) throw invalid('`workspace` must be an absolute path', ['workspace']);
  if (!fs.existsSync(ws) || !fs.statSync(ws).isDirectory()) throw invalid('`workspace` is not an existing directory', ['workspace']);
  if ('frame' in args && typeof args.frame !== 'string') throw invalid('`frame` must be a string', ['frame']);
  let legacy = false;
  let registry;
  if (!('grantable' in args)) registry = ownRegistry(core);
  else if (args.grantable === null) { registry = [...LEGACY_SIX]; legacy = true; }
  else registry = names(args.grantable, 'grantable');
  const notGrantable = args.not_grantable == null ? [] : rows(args.not_grantable, 'not_grantable', ['name', 'reason']);
  const session = 'session_tools' in args && args.session_tools !== null ? names(args.session_tools, 'session_tools') : null;
  if ('builtins' in args && args.builtins !== null) rows(args.builtins, 'builtins', ['filename', 'source']);
  for (const key of ['skills', 'knowledge', 'mcp', 'memory']) {
    const v = args[key];
    if (v !== undefined && v !== null && (typeof v !== 'object' || Array.isArray(v))) throw invalid(`\`${key}\` must be an object`, [key]);
  }
  // capconf's world rule (SPEC TOOL-04, decided points): registry names are distinct under
  // ASCII case folding, within `grantable` and across the two lists; Gemini has no registry,
  // so this is the adapter's side of world.setup, as _driverkit/world.py is the others'.
  const fold = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const seen = new Map();
  registry.forEach((n, i) => {
    if (seen.has(fold(n))) throw invalid(`registry names \`${seen.get(fold(n))}\` and \`${n}\` are equal up to case`, ['grantable', i]);
    seen.set(fold(n), n);
  });
  notGrantable.forEach((r, i) => {
    if (seen.has(fold(r.name))) throw invalid(`\`${r.name}\` is both grantable and not grantable`, ['not_grantable', i]);
  });
  return {workspace: fs.realpathSync(ws), frame: args.frame ?? null, registry, not_grantable: notGrantable,
    session_tools: session, legacy_fallback: legacy, raw: args};
}

export function registryJson(world) {
  return {grantable: world.registry, not_grantable: world.not_grantable, legacy_fallback: world.legacy_fallback};
}
