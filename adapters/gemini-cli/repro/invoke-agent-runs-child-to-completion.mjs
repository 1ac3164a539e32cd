// Gemini's own delegation, end to end and without capconf: the main session's scheduler
// runs `invoke_agent {agent_name, prompt}` (Gemini's AgentTool) for a user-level agent
// file, Gemini's LocalSubagentInvocation runs the child's own loop with a scripted model,
// and the child ends by calling `complete_task`. It shows three design choices that the
// capconf delegation model (SPEC 10a) does not share:
// 1. synchronous: while the child waits for its model the parent's `invoke_agent` call is
//    still `executing` and has no response; the response is the child's final result
//    (DELEG-01 wants an immediate hand-off, the report later in the parent's inbox);
// 2. depth 1: the child's definition lists `invoke_agent`, its model is never offered it
//    (LocalAgentExecutor.create skips every Kind.Agent tool: "We do not allow agents to
//    call other agents"), and asking for it anyway is "Unauthorized tool call";
// 3. Task's other arguments do not exist: AgentTool's schema is `{agent_name, prompt}`.
// Why no clock: every step waits on Gemini's own promises (the child's model request).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {core, verdict} from './_common.mjs';

const genai = await import('@google/genai');
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'repro-gemini-deleg-'));
const workspace = path.join(home, 'ws');
fs.mkdirSync(path.join(home, '.gemini', 'agents'), {recursive: true});
fs.mkdirSync(workspace);
fs.writeFileSync(path.join(workspace, 'notes.txt'), 'child-read-marker\n');
fs.writeFileSync(path.join(home, '.gemini', 'agents', 'reader.md'),
  '---\nname: reader\ndescription: reads\ntools: [read_file, invoke_agent]\n---\nRead.\n');
process.env.GEMINI_CLI_HOME = home;

// The scripted model: each subagent turn waits until the script answers it.
const turns = [];
let wake = null;
function response(parts) {
  const r = new genai.GenerateContentResponse();
  r.candidates = [{content: {role: 'model', parts}, finishReason: 'STOP', index: 0}];
  r.usageMetadata = {promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2};
  return r;
}
const model = {
  async generateContentStream(request, _promptId, role) {
    if (role !== 'subagent') return (async function* () { yield response([{text: '{}'}]); })();
    const parts = await new Promise((resolve) => { turns.push({request, resolve}); wake?.(); });
    return (async function* () { yield response(parts); })();
  },
  async generateContent() { return response([{text: '{}'}]); },
  async countTokens() { return {totalTokens: 1}; },
  async embedContent() { return {embeddings: []}; },
};
const nextTurn = () => (turns.length ? Promise.resolve(turns.shift())
  : new Promise((resolve) => { wake = () => { wake = null; resolve(turns.shift()); }; }));

core.FakeContentGenerator.fromFile = async () => model;
const config = new core.Config({
  sessionId: 'repro-deleg', targetDir: workspace, cwd: workspace, debugMode: false,
  model: 'gemini-2.5-flash', interactive: true, approvalMode: 'yolo',
  telemetry: {enabled: false}, usageStatisticsEnabled: false, mcpEnabled: false,
  extensionsEnabled: false, enableHooks: false, skillsSupport: false, enableAgents: true,
  checkpointing: false, fakeResponses: path.join(home, 'scripted-model'),
  coreTools: ['read_file', 'invoke_agent'],
  policyEngineConfig: await core.createPolicyEngineConfig({}, 'yolo', undefined, true),
});
await config.refreshAuth(core.AuthType.USE_GEMINI, 'repro-offline');
await config.initialize();

const sessionTools = config.getToolRegistry().getAllToolNames();
const scheduler = new core.Scheduler({
  context: config, messageBus: config.getMessageBus(), getPreferredEditor: () => undefined,
  schedulerId: 'repro-main'});
let parentDone = false;
const parent = scheduler.schedule([{callId: 'parent-call-1', name: 'invoke_agent',
  args: {agent_name: 'reader', prompt: 'read notes.txt'}, isClientInitiated: false,
  prompt_id: 'repro-main#1'}], new AbortController().signal)
  .then((calls) => { parentDone = true; return calls; });

const first = await nextTurn(); // the child's loop asks its model: Gemini runs the child
const offered = (first.request.config?.tools ?? [])
  .flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name);
const whileChildWaits = {parent_done: parentDone,
  parent_status: scheduler.state?.getToolCall?.('parent-call-1')?.status ?? null};
first.resolve([{functionCall: {id: 'child-1', name: 'invoke_agent',
  args: {agent_name: 'reader', prompt: 'deeper'}}}]);
const second = await nextTurn();
const refusal = JSON.stringify(second.request.contents.at(-1)?.parts ?? []);
second.resolve([{functionCall: {id: 'child-2', name: 'read_file',
  args: {file_path: path.join(workspace, 'notes.txt')}}}]);
const third = await nextTurn();
const read = JSON.stringify(third.request.contents.at(-1)?.parts ?? []);
third.resolve([{functionCall: {id: 'child-3', name: 'complete_task',
  args: {result: 'child-report-marker'}}}]);
const [done] = await parent;
const answer = JSON.stringify(done?.response?.responseParts ?? []);
fs.rmSync(home, {recursive: true, force: true});

const reproduced = sessionTools.includes('invoke_agent') && !whileChildWaits.parent_done
  && whileChildWaits.parent_status === 'executing'
  && !offered.includes('invoke_agent') && offered.includes('read_file')
  && /Unauthorized tool call: 'invoke_agent'/.test(refusal)
  && /child-read-marker/.test(read) && done?.status === 'success'
  && /child-report-marker/.test(answer);
verdict('invoke-agent-runs-child-to-completion', reproduced, {
  session_tools: sessionTools, child_offered: offered, while_child_waits: whileChildWaits,
  child_asks_invoke_agent: refusal.slice(0, 200), parent_status: done?.status ?? null,
  parent_response: answer.slice(0, 300)});
