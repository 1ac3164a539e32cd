// New: Gemini's read_file, write_file and replace tools, pointed at a FIFO inside the workspace,
// never answer: the call blocks on the pipe and the process stops answering (a SIGTERM
// is not acted on either; only SIGKILL ends it). capconf (SPEC 1.1, APPR-01)
// wants an error such as `not_a_regular_file`, never a blocked call. The script runs each
// tool of Gemini's own registry in a child process on a pipe nobody opens from the other
// side, and reports whether the call answered within 5 s of being issued (the child is
// killed otherwise); the same calls on a regular file are the control.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {execFileSync, spawn} from 'node:child_process';
import {fileURLToPath} from 'node:url';

const [, , role, toolName, ws, target = 'pipe'] = process.argv;

if (role === 'child') {
  const {core} = await import('./_common.mjs');
  process.env.GEMINI_CLI_HOME = path.dirname(ws);
  const config = new core.Config({sessionId: 'repro', targetDir: ws, cwd: ws, debugMode: false,
    model: 'gemini-2.5-flash', telemetry: {enabled: false}, usageStatisticsEnabled: false,
    mcpEnabled: false, extensionsEnabled: false, enableHooks: false, skillsSupport: false,
    coreTools: [toolName], fakeResponses: path.join(path.dirname(ws), 'model')});
  // write_file asks the model to correct content: a model that answers nothing, offline
  const {GenerateContentResponse} = await import('@google/genai');
  const empty = () => Object.assign(new GenerateContentResponse(),
    {candidates: [{content: {role: 'model', parts: [{text: '{}'}]}, finishReason: 'STOP', index: 0}]});
  core.FakeContentGenerator.fromFile = async () => ({
    generateContent: async () => empty(),
    generateContentStream: async () => (async function* () { yield empty(); })(),
    countTokens: async () => ({totalTokens: 1}), embedContent: async () => ({embeddings: []})});
  await config.refreshAuth(core.AuthType.USE_GEMINI, 'offline');
  await config.initialize();
  const file = path.join(ws, target);
  const args = {read_file: {file_path: file}, write_file: {file_path: file, content: 'x'},
    replace: {file_path: file, old_string: 'a', new_string: 'b', instruction: 'edit'}}[toolName];
  const invocation = config.getToolRegistry().getTool(toolName).build(args);
  process.stdout.write('ready\n'); // the parent's clock starts here, after Gemini's start-up
  const result = await invocation.execute(new AbortController().signal);
  process.stdout.write(JSON.stringify({answered: String(result.llmContent).slice(0, 200)}));
  process.exit(0);
}

const {verdict} = await import('./_common.mjs');
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'repro-fifo-'));
const workspace = path.join(home, 'ws');
fs.mkdirSync(workspace);
execFileSync('mkfifo', [path.join(workspace, 'pipe')]);
fs.writeFileSync(path.join(workspace, 'plain.txt'), 'a\n');
const run = (tool, target) => new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'child', tool, workspace, target],
      {stdio: ['ignore', 'pipe', 'ignore']});
    let out = '';
    let timer = null;
    child.stdout.on('data', (d) => {
      out += d;
      if (timer === null && out.includes('ready\n')) timer = setTimeout(() => { child.kill('SIGKILL'); }, 5000);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal === 'SIGKILL' ? {answered: false, killed_after_ms: 5000} : {answered: true, out, code});
    });
  });
const evidence = {};
const control = {};
for (const tool of ['read_file', 'write_file', 'replace']) {
  evidence[tool] = await run(tool, 'pipe');
  control[tool] = await run(tool, 'plain.txt'); // the same call on a regular file answers
}
fs.rmSync(home, {recursive: true, force: true});
verdict('fifo-call-hangs', Object.values(evidence).every((e) => !e.answered)
  && Object.values(control).every((e) => e.answered && e.code === 0), {fifo: evidence, regular_file: control});
