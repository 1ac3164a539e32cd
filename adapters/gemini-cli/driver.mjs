#!/usr/bin/env node
// capconf driver for Gemini CLI's core (@google/gemini-cli-core): JSON Lines on
// stdin/stdout, every capability decision made by Gemini's own code (see README.md).
// Core writes debug lines through `console`; they go to stderr so stdout stays the
// protocol channel. Without the real runtime installed the driver refuses to start.

import {readFileSync} from 'node:fs';
import {Worker} from 'node:worker_threads';

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

const WATCHED = ['tool.call', 'card.decide'];
const session = new Session(core, genai, version);
const watchdog = startWatchdog();
const splitter = new LineSplitter();
let chain = Promise.resolve();
let quitting = false;

function write(response) {
  out.write(`${JSON.stringify(response)}\n`);
}

/**
 * The adapter's own deadline for the ops that run a Gemini tool (`tool.call`,
 * `card.decide`). Why: Gemini's `read_file` on a FIFO blocks the whole process (the event
 * loop never turns again) and its `write_file`/`replace` never settle and ignore the abort
 * (repro/fifo-call-hangs.mjs), so without it each such case costs capconf's 20 s request
 * timeout. A worker thread (its own event loop) watches the op in flight; past the
 * deadline it says on stderr what Gemini did (its tool did not answer) and ends the
 * process, whose Gemini session is stuck: the case fails as crashed on that op, with that
 * stderr tail, and the next case starts a fresh driver. (Answering the request first would
 * race the next request into the dying process.) Nothing is hidden or repaired.
 */
function startWatchdog() {
  const deadlineMs = Number(process.env.CAPCONF_GEMINI_CALL_DEADLINE_MS ?? 8000);
  const shared = new Int32Array(new SharedArrayBuffer(16)); // [state, id, op, generation]
  const code = `
    const {workerData} = require('node:worker_threads');
    const fs = require('node:fs');
    const {shared, deadlineMs, ops} = workerData;
    let seen = -1, since = 0;
    setInterval(() => {
      if (Atomics.load(shared, 0) !== 1) { seen = -1; return; }
      const gen = Atomics.load(shared, 3);
      if (gen !== seen) { seen = gen; since = Date.now(); return; }
      if (Date.now() - since < deadlineMs) return;
      if (Atomics.compareExchange(shared, 0, 1, 3) !== 1) return;
      const op = ops[Atomics.load(shared, 2)];
      const message = 'Gemini CLI did not answer ' + op + ' within ' + deadlineMs + ' ms: its tool '
        + 'call neither returned nor settled (a FIFO blocks read_file, write_file and '
        + 'replace: repro/fifo-call-hangs.mjs); the adapter ends its process';
      fs.writeSync(2, 'capconf Gemini CLI adapter: ' + message + '\\n');
      process.kill(process.pid, 'SIGKILL');
    }, 100);`;
  const worker = new Worker(code, {eval: true, workerData: {shared, deadlineMs, ops: WATCHED}});
  worker.unref();
  return shared;
}


/** Whether this response is still ours to write (the watchdog did not answer first). */
function settle(watched) {
  if (!watched) return true;
  return Atomics.compareExchange(watchdog, 0, 1, 0) === 1;
}

async function answer(line) {
  const parsed = readRequest(line);
  if (parsed.blank) return;
  if (parsed.response) { write(parsed.response); return; }
  const {id, op, args} = parsed.request;
  const watched = WATCHED.includes(op) && Number.isSafeInteger(id) && id >= -2147483648 && id <= 2147483647;
  if (watched) {
    Atomics.store(watchdog, 1, id);
    Atomics.store(watchdog, 2, WATCHED.indexOf(op));
    Atomics.add(watchdog, 3, 1);
    Atomics.store(watchdog, 0, 1);
  }
  try {
    const result = await session.handle(op, args);
    if (settle(watched)) write({id, ok: true, result});
    if (op === 'shutdown') quitting = true;
  } catch (error) {
    if (!settle(watched)) return;
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
