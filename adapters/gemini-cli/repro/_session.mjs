// Shared by the design probes that need a whole Gemini session: a `Config` built the way
// the CLI builds one (HOME under a scratch folder, skills on, a trusted workspace), with a
// content generator that is never asked anything (nothing here runs a model turn).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {core} from './_common.mjs';

/** A scratch HOME and workspace; `files` maps paths under them ("home/..", "ws/..") to text. */
export function scratch(files) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'repro-session-'));
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), {recursive: true});
    fs.writeFileSync(file, text);
  }
  fs.mkdirSync(path.join(root, 'ws'), {recursive: true});
  fs.mkdirSync(path.join(root, 'home'), {recursive: true});
  return {root, home: path.join(root, 'home'), workspace: path.join(root, 'ws'),
    dispose: () => fs.rmSync(root, {recursive: true, force: true})};
}

export async function session(dirs) {
  process.env.GEMINI_CLI_HOME = dirs.home;
  core.FakeContentGenerator.fromFile = async () => ({
    generateContent: async () => { throw new Error('no model in a probe'); },
    generateContentStream: async () => { throw new Error('no model in a probe'); },
    countTokens: async () => ({totalTokens: 1}), embedContent: async () => ({embeddings: []}),
  });
  const config = new core.Config({
    sessionId: 'repro', targetDir: dirs.workspace, cwd: dirs.workspace, debugMode: false,
    model: 'gemini-2.5-flash', interactive: false, telemetry: {enabled: false},
    usageStatisticsEnabled: false, mcpEnabled: false, extensionsEnabled: false,
    enableHooks: false, skillsSupport: true, enableAgents: true, checkpointing: false,
    trustedFolder: true, fakeResponses: path.join(dirs.root, 'no-model'),
  });
  await config.refreshAuth(core.AuthType.USE_GEMINI, 'repro-offline');
  await config.initialize();
  return config;
}

/** Gemini's loader on agent text written to disk, then the subagent's system prompt. */
export async function subagentPrompt(config, dir, text) {
  const file = path.join(dir, 'agent.md');
  fs.writeFileSync(file, text);
  const [front] = await core.parseAgentMarkdown(file);
  const definition = core.markdownToAgentDefinition(front, {filePath: file});
  const executor = await core.LocalAgentExecutor.create(definition, config, () => {});
  return {executor, prompt: await executor.buildSystemPrompt({})};
}
