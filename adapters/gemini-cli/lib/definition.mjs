// A capconf definition -> a Gemini CLI agent file -> Gemini's own loader.
// Why a file: Gemini loads user agents from `$GEMINI_CLI_HOME/.gemini/agents/*.md`, so the
// adapter writes exactly that file and has Gemini's `parseAgentMarkdown` read it from disk
// (its own decoding, its own front-matter split, its own YAML and zod schema). The adapter
// changes only vocabulary: the YAML form's `prompt` key becomes the Markdown body (Gemini
// agents are Markdown only), and `tools` list entries that are capconf canonical names
// become Gemini's names. Everything else, every other key included, is passed on as written.

import * as fs from 'node:fs';
import * as path from 'node:path';
import yaml from 'js-yaml';
import {toGemini} from './vocabulary.mjs';
import {diag, loaderDiagnostics} from './diagnostics.mjs';

const FRONT = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n([\s\S]*))?/;

export class BadRequest extends Error {
  constructor(message, pathParts) {
    super(message);
    this.path = pathParts;
  }
}

/** The source bytes of a request (`source` text or `source_b64`). */
export function sourceBytes(args) {
  if (typeof args.source === 'string') return Buffer.from(args.source, 'utf8');
  if (typeof args.source_b64 === 'string') return Buffer.from(args.source_b64, 'base64');
  if ('source' in args) throw new BadRequest('`source` must be a string', ['args', 'source']);
  if ('source_b64' in args) throw new BadRequest('`source_b64` must be a string', ['args', 'source_b64']);
  throw new BadRequest('missing `source` (or `source_b64`)', ['args']);
}

/**
 * Which of capconf's two forms the source is in (capconf's words, SPEC DEF-01: Gemini has
 * the Markdown form only): the `format` argument, else the file name's extension, else
 * Markdown only when the first line is `---` and a later line is `---` (a YAML document
 * that opens with the document marker and has no later `---` is YAML).
 */
function isMarkdown(args, text) {
  if (args.format === 'markdown') return true;
  if (args.format === 'yaml') return false;
  if (typeof args.filename === 'string') {
    if (/\.(md|markdown)$/i.test(args.filename)) return true;
    if (/\.ya?ml$/i.test(args.filename)) return false;
  }
  const [first, ...rest] = text.replace(/^\ufeff/, '').split(/\r\n|\r|\n/);
  const marker = (line) => /^---[ \t]*$/.test(line);
  return marker(first) && rest.some(marker);
}

/**
 * capconf's `mcp: {servers: [names]}` names session servers; Gemini's `mcp_servers` holds
 * each server's launch entry inline. So the list becomes that mapping, each entry taken
 * from the world's server table (`command`, `args`, `env`, `cwd`), or `{}` for a name the
 * world lacks (Gemini decides what an empty entry means). Any other shape stays as written.
 */
function translateMcp(front, mcpWorld) {
  const worldServers = mcpWorld?.servers;
  const timeoutMs = mcpWorld?.timeoutMs;
  const mcp = front.mcp;
  if (mcp === null || typeof mcp !== 'object' || Array.isArray(mcp)) return;
  const keys = Object.keys(mcp);
  if (keys.length !== 1 || keys[0] !== 'servers' || !Array.isArray(mcp.servers)) return;
  if (!mcp.servers.every((n) => typeof n === 'string')) return;
  const servers = {};
  for (const name of mcp.servers) {
    const entry = worldServers?.[name] ?? {};
    const inline = {};
    for (const k of ['command', 'args', 'env', 'cwd']) if (k in entry) inline[k] = entry[k];
    if (Number.isInteger(timeoutMs)) inline.timeout = timeoutMs; // Gemini's per-request timeout, ms
    servers[name] = inline;
  }
  delete front.mcp;
  front.mcp_servers = servers;
}

/** Rename the capconf canonical names of a `tools` list; a string or anything else stays. */
function translateTools(front) {
  if (!Array.isArray(front.tools)) return;
  front.tools = front.tools.map((t) => (typeof t === 'string' ? toGemini(t) : t));
}

/**
 * The Gemini agent file for a capconf source, plus what the adapter needs to report back
 * in capconf's words (the tool names as declared). Bytes that are not UTF-8, YAML that does
 * not parse and documents that are not mappings are passed to Gemini untouched, so that
 * Gemini's loader, not the adapter, reports them.
 */
export function toAgentFile(args, bytes, mcpWorld) {
  const text = bytes.toString('utf8');
  const markdown = isMarkdown(args, text);
  let frontText;
  let body;
  if (markdown) {
    const m = text.match(FRONT);
    if (!m) return {markdown, bytes, declaredTools: null, verbatim: true};
    frontText = m[1];
    body = m[2] ?? '';
  } else {
    frontText = text;
    body = '';
  }
  let front;
  try {
    front = yaml.load(frontText);
  } catch {
    return {markdown, bytes: markdown ? bytes : Buffer.from(`---\n${text}\n---\n`), declaredTools: null, verbatim: true};
  }
  if (front === null || typeof front !== 'object' || Array.isArray(front)) {
    return {markdown, bytes: markdown ? bytes : Buffer.from(`---\n${text}\n---\n`), declaredTools: null, verbatim: true};
  }
  const declaredTools = Array.isArray(front.tools) ? [...front.tools] : null;
  if (!markdown && Object.hasOwn(front, 'prompt') && typeof front.prompt === 'string') {
    body = front.prompt;
    delete front.prompt;
  }
  translateTools(front);
  const declaredServers = Array.isArray(front.mcp?.servers) ? [...front.mcp.servers] : null;
  translateMcp(front, mcpWorld);
  const out = `---\n${yaml.dump(front, {lineWidth: -1})}---\n${body}`;
  return {markdown, bytes: Buffer.from(out, 'utf8'), declaredTools,
    declaredServers: front.mcp_servers ? declaredServers : null};
}

/** Where the source's lines sit in the file Gemini read (lib/diagnostics.mjs). */
function sourceOf(file, bytes) {
  // only a file that holds the source's own lines (as written, or the YAML form wrapped in
  // `---` lines) has positions that are the source's; a translated file has none
  return {text: file.verbatim ? bytes.toString('utf8') : null, frontLineOffset: file.markdown ? 1 : 0,
    servers: file.declaredServers ?? []};
}

let fileCounter = 0;

/**
 * Load a capconf source with Gemini's loader. Returns {ok, frontmatter, definition,
 * diagnostics, declaredTools, markdown}. `definition` is Gemini's AgentDefinition.
 */
export async function loadWithGemini(core, agentsDir, args, mcpWorld) {
  const bytes = sourceBytes(args);
  const file = toAgentFile(args, bytes, mcpWorld);
  fs.mkdirSync(agentsDir, {recursive: true});
  fileCounter += 1;
  const filePath = path.join(agentsDir, `capconf-${process.pid}-${fileCounter}.md`);
  fs.writeFileSync(filePath, file.bytes);
  try {
    const [front] = await core.parseAgentMarkdown(filePath);
    if (front.kind !== 'local') {
      return {ok: false, diagnostics: [diag('DEF-TYPE', ['kind'], 'Gemini CLI loaded a remote agent; capconf drives local agents only')], ...file};
    }
    const definition = core.markdownToAgentDefinition(front, {filePath});
    return {ok: true, frontmatter: front, definition, diagnostics: [], ...file};
  } catch (error) {
    return {ok: false, diagnostics: loaderDiagnostics(error, sourceOf(file, bytes)), error: String(error?.message ?? error), ...file};
  } finally {
    fs.rmSync(filePath, {force: true});
  }
}

const CAPCONF_KEYS = new Set(['name', 'description', 'tools', 'skills', 'mcp', 'knowledge', 'memory', 'prompt']);

/** capconf's normalised definition, from what Gemini parsed (null when Gemini refused it). */
export function normalised(loaded) {
  if (!loaded.ok) return null;
  const fm = loaded.frontmatter;
  const extra = {};
  for (const [k, v] of Object.entries(fm)) {
    if (!CAPCONF_KEYS.has(k) && !['system_prompt', 'kind', 'mcp_servers'].includes(k)) extra[k] = v;
  }
  return {
    format: loaded.markdown ? 'markdown' : 'yaml',
    name: fm.name,
    description: fm.description,
    body: fm.system_prompt,
    tools: loaded.declaredTools,
    skills: null,
    mcp: loaded.declaredServers ? {servers: loaded.declaredServers} : null,
    knowledge: null,
    memory: null,
    extra,
  };
}
