// New: Gemini's read_file and write_file tools, pointed at a FIFO inside the workspace,
// never answer: the call blocks on the pipe and the process stops answering (a SIGTERM
// is not acted on either; only SIGKILL ends it). capconf (SPEC 1.1, APPR-01)
// wants an error such as `not_a_regular_file`, never a blocked call. The script runs each
// tool of Gemini's own registry in a child process on a pipe nobody opens from the other
// side, and reports whether the child answered within 5 s (it is killed otherwise).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {execFileSync, spawn} from 'node:child_process';
import {fileURLToPath} from 'node:url';

const [, , role, toolName, ws] = process.argv;

if (role === 'child') {
  const {core} = await import('./_common.mjs');
  process.env.GEMINI_CLI_HOME = path.dirname(ws);
  const config = new core.Config({sessionId: 'repro', targetDir: ws, cwd: ws, debugMode: false,
    model: 'gemini-2.5-flash', telemetry: {enabled: false}, usageStatisticsEnabled: false,
    mcpEnabled: false, extensionsEnabled: false, enableHooks: false, skillsSupport: false,
    coreTools: [toolName]});
  await config.initialize();
  const args = toolName === 'write_file' ? {file_path: path.join(ws, 'pipe'), content: 'x'}
    : {file_path: path.join(ws, 'pipe')};
  const invocation = config.getToolRegistry().getTool(toolName).build(args);
  const result = await invocation.execute(new AbortController().signal);
  process.stdout.write(JSON.stringify({answered: String(result.llmContent).slice(0, 200)}));
  process.exit(0);
}

const {verdict} = await import('./_common.mjs');
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'repro-fifo-'));
const workspace = path.join(home, 'ws');
fs.mkdirSync(workspace);
execFileSync('mkfifo', [path.join(workspace, 'pipe')]);
const evidence = {};
for (const tool of ['read_file', 'write_file']) {
  evidence[tool] = await new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'child', tool, workspace],
      {stdio: ['ignore', 'pipe', 'ignore']});
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); }, 5000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal === 'SIGKILL' ? {answered: false, killed_after_ms: 5000} : {answered: true, out, code});
    });
  });
}
fs.rmSync(home, {recursive: true, force: true});
verdict('fifo-call-hangs', Object.values(evidence).every((e) => !e.answered), evidence);
