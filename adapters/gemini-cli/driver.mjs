#!/usr/bin/env node
// capconf driver for Gemini CLI's core (@google/gemini-cli-core): JSON Lines on
// stdin/stdout, every capability decision made by Gemini's own code (see README.md).
// Core writes debug lines through `console`; they go to stderr so stdout stays the
// protocol channel. Without the real runtime installed the driver refuses to start.

import {readFileSync} from 'node:fs';

const out = process.stdout;
for (const k of ['log', 'debug', 'info', 'warn', 'error', 'trace']) {
  console[k] = (...a) => process.stderr.write(`${a.map(String).join(' ')}\n`);
}

async function loadRuntime() {
  try {
    const core = await import('@google/gemini-cli-core');
    const genai = await import('@google/genai');
    const pkgUrl = new URL(import.meta.resolve('@google/gemini-cli-core/package.json'));
    const version = JSON.parse(readFileSync(pkgUrl, 'utf8')).version;
    return {core, genai, version};
  } catch (error) {
    process.stderr.write(
      'capconf Gemini CLI adapter: @google/gemini-cli-core is not installed, so there is ' +
      'no runtime to test (this adapter has no fallback implementation).\n' +
      'Install it with: npm ci --prefix adapters/gemini-cli\n' +
      `(${error?.code ?? ''} ${error?.message ?? error})\n`);
    process.exit(3);
  }
}

const {core, genai, version} = await loadRuntime();
const {Session} = await import('./lib/ops.mjs');
const {LineSplitter, protocolError, readRequest} = await import('./lib/framing.mjs');
const {ProtocolError} = await import('./lib/runtime.mjs');

const session = new Session(core, genai, version);
const splitter = new LineSplitter();
let chain = Promise.resolve();
let quitting = false;

function write(response) {
  out.write(`${JSON.stringify(response)}\n`);
}

async function answer(line) {
  const parsed = readRequest(line);
  if (parsed.blank) return;
  if (parsed.response) { write(parsed.response); return; }
  const {id, op, args} = parsed.request;
  try {
    const result = await session.handle(op, args);
    write({id, ok: true, result});
    if (op === 'shutdown') quitting = true;
  } catch (error) {
    if (error instanceof ProtocolError) write(protocolError(id, error.code, error.message, error.path));
    else {
      process.stderr.write(`internal error on ${op}: ${error?.stack ?? error}\n`);
      write(protocolError(id, 'internal', String(error?.message ?? error)));
    }
  }
}

function finish() {
  if (session.world) session.world.dispose();
  process.exit(0);
}

process.stdin.on('data', (chunk) => {
  for (const line of splitter.push(chunk)) {
    chain = chain.then(() => (quitting ? undefined : answer(line))).then(() => { if (quitting) finish(); });
  }
});
process.stdin.on('end', () => {
  for (const line of splitter.end()) chain = chain.then(() => answer(line));
  chain.then(finish);
});
