// Shared by the delegation reproductions: one Gemini CLI session built as the CLI builds
// it (Config, its tool registry with Gemini's AgentTool `invoke_agent`, policy engine and
// message bus), user-level agent files in `$GEMINI_CLI_HOME/.gemini/agents` (read by
// Gemini's AgentRegistry), and a scripted model whose every subagent turn waits until the
// script answers it. Why: Gemini runs a delegated child's loop itself and asks the model
// for each of the child's turns; the script plays that model, nothing else.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {core} from './_common.mjs';

const genai = await import('@google/genai');

function response(parts) {
  const r = new genai.GenerateContentResponse();
  r.candidates = [{content: {role: 'model', parts}, finishReason: 'STOP', index: 0}];
  r.usageMetadata = {promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2};
  return r;
}

/** The model slot: subagent turns queue up for `nextTurn`; utility calls get `{}`. */
class ChildTurns {
  constructor() {
    this.turns = [];
    this.wake = null;
  }

  async generateContentStream(request, _promptId, role) {
    if (role !== 'subagent') return (async function* () { yield response([{text: '{}'}]); })();
    const parts = await new Promise((resolve) => { this.turns.push({request, resolve}); this.wake?.(); });
    return (async function* () { yield response(parts); })();
  }

  async generateContent() { return response([{text: '{}'}]); }
  async countTokens() { return {totalTokens: 1}; }
  async embedContent() { return {embeddings: []}; }

  /** The child's next model request: `{request, resolve(parts)}`. */
  nextTurn() {
    if (this.turns.length) return Promise.resolve(this.turns.shift());
    return new Promise((resolve) => { this.wake = () => { this.wake = null; resolve(this.turns.shift()); }; });
  }
}

/**
 * A session with the given agent files ({name: markdown}) and workspace files, in an
 * approval mode; `call(name, args)` schedules one of the main agent's calls through
 * Gemini's Scheduler (as the CLI's loop does) and returns its promise and abort controller.
 */
export async function session({agents, files = {}, mode = 'yolo', coreTools}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'repro-gemini-deleg-'));
  const workspace = path.join(home, 'ws');
  fs.mkdirSync(path.join(home, '.gemini', 'agents'), {recursive: true});
  fs.mkdirSync(workspace);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(workspace, name), text);
  for (const [name, text] of Object.entries(agents)) {
    fs.writeFileSync(path.join(home, '.gemini', 'agents', `${name}.md`), text);
  }
  process.env.GEMINI_CLI_HOME = home;
  const model = new ChildTurns();
  core.FakeContentGenerator.fromFile = async () => model;
  const config = new core.Config({
    sessionId: 'repro-deleg', targetDir: workspace, cwd: workspace, debugMode: false,
    model: 'gemini-2.5-flash', interactive: true, approvalMode: mode,
    telemetry: {enabled: false}, usageStatisticsEnabled: false, mcpEnabled: false,
    extensionsEnabled: false, enableHooks: false, skillsSupport: false, enableAgents: true,
    checkpointing: false, fakeResponses: path.join(home, 'scripted-model'), coreTools,
    policyEngineConfig: await core.createPolicyEngineConfig({}, mode, undefined, true),
  });
  await config.refreshAuth(core.AuthType.USE_GEMINI, 'repro-offline');
  await config.initialize();
  const updates = [];
  config.getMessageBus().subscribe(core.MessageBusType.TOOL_CALLS_UPDATE,
    (m) => { for (const c of m.toolCalls ?? []) updates.push(c); });
  const scheduler = new core.Scheduler({
    context: config, messageBus: config.getMessageBus(), getPreferredEditor: () => undefined,
    schedulerId: 'repro-main'});
  let calls = 0;
  function call(name, args) {
    calls += 1;
    const abort = new AbortController();
    const callId = `parent-call-${calls}`;
    const state = {done: false};
    const promise = scheduler.schedule([{callId, name, args, isClientInitiated: false,
      prompt_id: `repro-main#${calls}`}], abort.signal)
      .then(([done]) => { state.done = true; return done; });
    return {callId, promise, abort, state};
  }
  return {
    config, workspace, model, updates, scheduler, call,
    status: (callId) => scheduler.state?.getToolCall?.(callId)?.status ?? null,
    lastParts: (turn) => JSON.stringify(turn.request.contents.at(-1)?.parts ?? []),
    offered: (turn) => (turn.request.config?.tools ?? [])
      .flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name),
    dispose: () => fs.rmSync(home, {recursive: true, force: true}),
  };
}
