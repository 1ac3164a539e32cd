// `approval.decide`: the pure decision, asked of Gemini CLI's own PolicyEngine. capconf's
// decision inputs are abstract (an action and a target); Gemini's engine decides a concrete
// tool call, so the adapter builds one representative call per action (the table below,
// listed in README as supplied by the adapter) and reports Gemini's verdict and rule.
// The target only picks the call's path: Gemini's policy rules do not look at it.

import * as path from 'node:path';
import {ProtocolError, TIER_TO_MODE} from './runtime.mjs';

const VERDICT = {allow: 'allow', deny: 'deny', ask_user: 'ask'};
const SERVER = 'capconf';

function representative(action, file) {
  switch (action) {
    case 'read': return {name: 'read_file', args: {file_path: file}};
    case 'write': return {name: 'write_file', args: {file_path: file, content: ''}};
    case 'edit': return {name: 'replace', args: {file_path: file, old_string: 'a', new_string: 'b', instruction: 'edit'}};
    case 'bash': return {name: 'run_shell_command', args: {command: 'true', dir_path: path.dirname(file)}};
    case 'network': return {name: 'web_fetch', args: {prompt: 'https://example.invalid/'}};
    case 'mcp': return {name: `mcp_${SERVER}_tool`, args: {}};
    case 'config-tool': return {name: 'capconf_config_tool', args: {}};
    default: throw new ProtocolError('bad_request', `unknown action ${JSON.stringify(action)}`, ['args', 'action']);
  }
}

function targetFile(workspace, roots, target) {
  if (target === undefined || target === 'inside-workspace') return path.join(workspace, 'capconf-target');
  if (target === 'inside-writable-root') return path.join(roots[0] ?? '/capconf-writable-root', 'capconf-target');
  if (target === 'outside') return '/capconf-outside/capconf-target';
  throw new ProtocolError('bad_request', `unknown target ${JSON.stringify(target)}`, ['args', 'target']);
}

export async function decide(core, world, args) {
  const tier = args.tier;
  if (!Object.hasOwn(TIER_TO_MODE, tier)) {
    throw new ProtocolError('bad_request', `Gemini CLI has no approval mode for the tier ${tier}`, ['args', 'tier']);
  }
  const attendance = args.attendance ?? 'attended';
  const interactive = attendance === 'attended' && (args.ask_policy ?? 'ask-parent') !== 'never-ask';
  const mode = TIER_TO_MODE[tier];
  const settings = args.allowlisted === true ? {mcpServers: {[SERVER]: {command: 'true', trust: true}}} : {};
  const engine = new core.PolicyEngine(await core.createPolicyEngineConfig(settings, mode, undefined, interactive));
  const call = representative(args.action, targetFile(world.world.workspace, world.policy.writable_roots, args.target));
  const server = args.action === 'mcp' ? SERVER : undefined;
  const result = await engine.check(call, server);
  const verdict = VERDICT[result.decision] ?? String(result.decision);
  const rule = result.rule
    ? `gemini:${result.rule.toolName ?? '*'}:${result.rule.decision}:${result.rule.priority ?? ''}`
    : 'gemini:default';
  return {verdict, reason: `Gemini CLI's policy engine decided ${result.decision} for ${call.name} (${mode}, ${interactive ? 'interactive' : 'non-interactive'})`, rule};
}
