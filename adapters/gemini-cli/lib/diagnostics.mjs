// Gemini's loader error text -> capconf diagnostics. Why a module of its own: the error is
// the only thing Gemini says about a refused agent, so every word of it that carries a
// location is translated, and nothing is added that Gemini did not say.
//
// What Gemini's text holds (agents/agentLoader.js of core 0.61.0):
// - a js-yaml failure, `YAML frontmatter parsing failed: <reason> (<line>:<column>)`, the
//   line and column 1-based in the front-matter string, the column in UTF-16 units;
// - a zod failure, one issue per line, `[(Local Agent) |(Remote Agent) ][<path>: ]<message>`
//   (formatZodError), the path the zod key path joined with `.`;
// - a top-level YAML list, validated as `Remote Agents List` (parseAgentMarkdown).
// Translation only: the line moves from the front matter to the source file (the Markdown
// form's front matter starts on line 2; the adapter hands the YAML form to Gemini as front
// matter of its own, so its lines are the source's), the column is recounted in code
// points on the source line (SPEC DEF-03), the path renames the keys the adapter renamed
// (`mcp_servers.<name>` is capconf's `mcp.servers[i]`), and codes come from the table in
// vocabulary.mjs. Gemini refuses the whole agent for every one, so each is an `error`.

import {LOADER_DIAGNOSTICS} from './vocabulary.mjs';

const YAML_FAILURE = /YAML frontmatter parsing failed: ([^\n]*?)(?: \((\d+):(\d+)\))?(?:\n|$)/;
const ZOD_LINE = /^(?:\((Local|Remote) Agent\) )?(?:(\S+): )?(.*)$/;

/**
 * The diagnostics of a refused agent. `source` is what the adapter knows of the file:
 * `{text, frontLineOffset, servers}` (the source text, the source line of the front
 * matter's first line minus one, the declared MCP server names in order).
 */
export function loaderDiagnostics(error, source = {}) {
  const message = String(error?.message ?? error);
  const yamlFailure = message.match(YAML_FAILURE);
  if (yamlFailure) return [yamlDiagnostic(yamlFailure, message, source)];
  if (/Validation failed: Remote Agents List/.test(message)) {
    // Gemini read the document as a list (of remote agents), not as one agent's mapping
    return [diag('DEF-NOT-A-MAPPING', [], `Gemini CLI: ${firstLine(message)}`)];
  }
  const out = [];
  const seen = new Set();
  for (const raw of message.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const zod = raw.match(ZOD_LINE);
    // Gemini explains why the file is not a remote agent either; capconf drives local
    // agents only, so only the local reading's issues describe the capconf definition
    if (zod[1] === 'Remote') continue;
    const zodPath = zod[2] ? zod[2].split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p)) : [];
    for (const d of zodDiagnostics(zodPath, zod[3], raw, source)) {
      const key = JSON.stringify([d.code, d.path]);
      if (!seen.has(key)) { seen.add(key); out.push(d); }
    }
  }
  if (out.length === 0) out.push(diag('DEF-TYPE', [], `Gemini CLI refused the agent: ${message}`));
  return out;
}

function zodDiagnostics(zodPath, text, raw, source) {
  for (const row of LOADER_DIAGNOSTICS) {
    const m = text.match(row.match);
    if (!m) continue;
    if (row.at && !row.at.test(zodPath.join('.'))) continue;
    const message = `Gemini CLI: ${raw}`;
    if (row.keys) {
      return m[1].split(',').map((k) => k.trim().replace(/^'|'$/g, ''))
        .map((key) => diag(row.code, capconfPath([...zodPath, key], source), message));
    }
    return [diag(row.code, row.document ? [] : capconfPath(zodPath, source), message)];
  }
  return [];
}

/** A zod key path in capconf's words: the one key the adapter renames is `mcp_servers`. */
function capconfPath(zodPath, source) {
  if (zodPath[0] !== 'mcp_servers') return zodPath;
  const index = (source.servers ?? []).indexOf(zodPath[1]);
  return index < 0 ? ['mcp', 'servers'] : ['mcp', 'servers', index, ...zodPath.slice(2)];
}

function yamlDiagnostic(m, message, source) {
  // every js-yaml failure is Gemini's "parsing failed" (a repeated key included: js-yaml
  // refuses it, and Gemini does not say which key), so the code is DEF-YAML-SYNTAX
  const [, reason, lineText, columnText] = m;
  const line = Number(lineText) + (source.frontLineOffset ?? 0);
  const d = diag('DEF-YAML-SYNTAX', [], `Gemini CLI: YAML frontmatter parsing failed: ${reason}`);
  if (lineText === undefined) return d; // a failure without a mark (a stack overflow, say)
  d.column = codePointColumn(source.text, line, Number(columnText));
  if (d.column !== null) d.line = line;
  return d;
}

/** js-yaml's 1-based UTF-16 column on a source line, as a 1-based code-point column. */
function codePointColumn(text, line, utf16Column) {
  if (typeof text !== 'string') return null;
  const lineText = text.split(/\r\n|\r|\n/)[line - 1];
  if (lineText === undefined) return null;
  return [...lineText.slice(0, utf16Column - 1)].length + 1;
}

function firstLine(message) {
  return message.split('\n')[0].trim();
}

export function diag(code, pathParts, message) {
  return {code, severity: 'error', message, path: pathParts, line: null, column: null,
    requirement: null};
}
