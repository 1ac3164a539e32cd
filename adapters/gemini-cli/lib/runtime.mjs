// One capconf world = one Gemini CLI `Config` (its tool registry, policy engine and message
// bus), built the way the CLI builds it, with the scripted model in the content-generator
// slot. Agents are Gemini subagents run by Gemini's `LocalAgentExecutor`; a capconf
// `tool.call` is the agent's model asking for a function call in Gemini's agent loop.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {AgentTurns, ScriptedModel} from './model.mjs';
import {argsToCapconf, argsToGemini, toCapconf, toGemini, TOOL_ACTION, KIND_TO_ACTION} from './vocabulary.mjs';
import {canonicalJson} from './jcs.mjs';

export const TIER_TO_MODE = Object.freeze({
  'confirm-before-change': 'default',
  'auto-edit': 'autoEdit',
  'full-access': 'yolo',
});

let worldCounter = 0;

export class ProtocolError extends Error {
  constructor(code, message, pathParts) {
    super(message);
    this.code = code;
    this.path = pathParts;
  }
}

export class GeminiWorld {
  constructor(core, genai, world) {
    this.core = core;
    this.genai = genai;
    this.world = world; // the validated world.setup arguments
    worldCounter += 1;
    this.home = fs.mkdtempSync(path.join(os.tmpdir(), `capconf-gemini-${worldCounter}-`));
    this.scratch = path.join(this.home, 'scratch');
    this.policy = {tier: 'confirm-before-change', attendance: 'attended', ask_policy: 'ask-parent',
      writable_roots: []};
    this.config = null;
    this.agents = new Map();
    this.cards = [];
    this.callCounter = 0;
    this.updates = new Map(); // callId -> last tool call snapshot from TOOL_CALLS_UPDATE
    this.updateWaiters = [];
    this.parentLive = true; // APPR-05 bookkeeping: whether a parent request is live
  }

  dispose() {
    for (const agent of this.agents.values()) agent.abort.abort();
    fs.rmSync(this.home, {recursive: true, force: true});
  }

  /** Gemini's session tool table (`coreTools`): the session's tools that the registry grants. */
  coreTools() {
    const names = new Set(this.world.registry);
    const session = this.world.session_tools ?? this.world.registry;
    return session.filter((n) => names.has(n)).map(toGemini);
  }

  async ensureConfig() {
    if (this.config) return this.config;
    const core = this.core;
    process.env.GEMINI_CLI_HOME = this.home;
    const model = new ScriptedModel(this.genai.GenerateContentResponse);
    this.model = model;
    core.FakeContentGenerator.fromFile = async () => model;
    const interactive = this.policy.attendance === 'attended' && this.policy.ask_policy !== 'never-ask';
    const mode = TIER_TO_MODE[this.policy.tier];
    const config = new core.Config({
      sessionId: `capconf-${worldCounter}`, targetDir: this.world.workspace, cwd: this.world.workspace,
      debugMode: false, model: 'gemini-2.5-flash', interactive, approvalMode: mode,
      includeDirectories: this.policy.writable_roots,
      telemetry: {enabled: false}, usageStatisticsEnabled: false, mcpEnabled: worldServers(this.world) !== null,
      extensionsEnabled: false, enableHooks: false, skillsSupport: false, enableAgents: true,
      checkpointing: false, fakeResponses: path.join(this.home, 'scripted-model'),
      coreTools: this.coreTools(),
      policyEngineConfig: await core.createPolicyEngineConfig(mcpSettings(core, this.world), mode, undefined, interactive),
    });
    await config.refreshAuth(core.AuthType.USE_GEMINI, 'capconf-offline');
    await config.initialize();
    const bus = config.getMessageBus();
    bus.subscribe(core.MessageBusType.TOOL_CALLS_UPDATE, (m) => this.onUpdate(m));
    this.config = config;
    return config;
  }

  onUpdate(message) {
    if (process.env.CAPCONF_GEMINI_TRACE) process.stderr.write(`UPDATE ${JSON.stringify((message.toolCalls ?? []).map((c) => [c.request?.callId, c.status]))}\n`);
    for (const call of message.toolCalls ?? []) {
      // Gemini's scheduler may prefix the model's call id (`write_file__<id>`)
      const id = String(call.request?.callId ?? '').match(/capconf-call-\d+$/)?.[0];
      if (id) this.updates.set(id, call);
    }
    const waiters = this.updateWaiters.splice(0);
    for (const w of waiters) w();
  }

  nextUpdate() {
    return new Promise((resolve) => this.updateWaiters.push(resolve));
  }

  /** Gemini's per-agent tool registry for a loaded definition (names in Gemini's words). */
  async agentToolNames(definition) {
    const config = await this.ensureConfig();
    const executor = await this.core.LocalAgentExecutor.create(definition, config, () => {});
    return executor.toolRegistry.getAllToolNames()
      .filter((n) => n !== this.core.COMPLETE_TASK_TOOL_NAME);
  }

  async spawn(loaded, args) {
    const config = await this.ensureConfig();
    const turns = new AgentTurns();
    const activity = [];
    const executor = await this.core.LocalAgentExecutor.create(loaded.definition, config,
      (a) => activity.push(a));
    this.model.attach(executor.agentId, turns);
    const id = `agent-${this.agents.size + 1}`;
    const abort = new AbortController();
    const agent = {id, name: loaded.definition.name, executor, turns, abort, activity,
      background: args.background === true, parent: args.parent ?? null, stopped: false,
      done: false, toolNames: executor.toolRegistry.getAllToolNames()};
    agent.run = executor.run({query: 'capconf session'}, abort.signal)
      .then((out) => { agent.done = true; agent.output = out; })
      .catch((error) => { agent.done = true; agent.error = String(error?.message ?? error); });
    this.agents.set(id, agent);
    await Promise.race([turns.whenWaiting(), agent.run]);
    return agent;
  }

  /**
   * The system prompt Gemini sends its model for a loaded agent: its own executor is run
   * until the first model request, whose `systemInstruction` is read, and then aborted.
   */
  async systemPrompt(loaded) {
    const config = await this.ensureConfig();
    const turns = new AgentTurns();
    const executor = await this.core.LocalAgentExecutor.create(loaded.definition, config, () => {});
    this.model.attach(executor.agentId, turns);
    const abort = new AbortController();
    let ended = 'it returned';
    const run = executor.run({query: 'capconf session'}, abort.signal)
      .then((out) => { ended = `terminate_reason ${out?.terminate_reason}`; },
        (error) => { ended = String(error?.message ?? error); });
    const request = await Promise.race([turns.whenWaiting(), run.then(() => null)]);
    abort.abort();
    if (turns.pendingTurn) turns.play([{text: ''}]);
    if (request === null) {
      throw new ProtocolError('definition_invalid', `Gemini's agent loop ended before asking its model (${ended})`);
    }
    return instructionText(request.config?.systemInstruction);
  }

  agent(id) {
    const agent = this.agents.get(id);
    if (!agent) throw new ProtocolError('no_such_agent', `no agent ${JSON.stringify(id)}`, ['args', 'agent']);
    return agent;
  }

  /** A capconf tool call, issued by the agent's scripted model inside Gemini's loop. */
  async toolCall(agentId, tool, args) {
    const agent = this.agent(agentId);
    if (agent.stopped) {
      return failure('AGENT-STOPPED', `${agent.id} was stopped`, {agent: agent.id}, true);
    }
    if (agent.done) throw loopEnded(agent);
    if (!agent.turns.pendingTurn) {
      // Gemini's executor awaits its scheduler: while a call waits for confirmation the
      // agent's loop does not ask its model again, so Gemini takes no second call of this
      // agent. SPEC has no code for that; the answer says what Gemini does (the protocol's
      // `not_implemented`: the operation is not one Gemini supports) and the case fails
      // with that real cause.
      throw new ProtocolError('not_implemented', `Gemini CLI takes no second call of ${agent.id} `
        + 'while its previous call waits for confirmation (its agent loop awaits the scheduler '
        + 'and does not ask its model again)');
    }
    this.callCounter += 1;
    const callId = `capconf-call-${this.callCounter}`;
    const mcp = mcpCall(this.core, tool, args);
    const geminiName = mcp ? mcp.name : typeof tool === 'string' ? toGemini(tool) : tool;
    const geminiArgs = mcp ? mcp.args : argsToGemini(tool, args) ?? {};
    const call = {callId, tool, geminiName, args, agent, mcp: mcp !== null};
    agent.turns.play([{functionCall: {id: callId, name: geminiName, args: geminiArgs}}]);
    return this.outcome(call);
  }

  /** Wait for what Gemini did with the call: its function response, or an ask. */
  async outcome(call) {
    const agent = call.agent;
    for (;;) {
      const snapshot = this.updates.get(call.callId);
      if (snapshot?.status === 'awaiting_approval' && !call.card) {
        return this.raiseCard(call, snapshot);
      }
      const request = agent.turns.pendingTurn?.request;
      const response = request && functionResponse(request, call.callId);
      if (response) return this.envelope(call, response);
      if (agent.done) throw loopEnded(agent);
      await Promise.race([agent.turns.whenWaiting(), this.nextUpdate(), agent.run]);
    }
  }

  raiseCard(call, snapshot) {
    // an MCP card summarises the MCP tool's arguments (capconf's mcp_call wraps them)
    const capArgs = (call.mcp ? call.args.arguments : call.args) ?? {};
    const kind = snapshot.tool?.kind;
    const card = {
      id: `card-${this.cards.length + 1}`, state: 'pending',
      origin: {agent_id: call.agent.id, agent_name: call.agent.name, subagent: true},
      tool: snapshot.tool instanceof this.core.DiscoveredMCPTool
        ? `${snapshot.tool.serverName}__${snapshot.tool.serverToolName}` : toCapconf(call.geminiName),
      action: TOOL_ACTION[call.tool]
        ?? (snapshot.tool instanceof this.core.DiscoveredMCPTool ? 'mcp' : KIND_TO_ACTION[kind]) ?? 'config-tool',
      summary: summary(capArgs),
      reason: `Gemini CLI's policy engine asks the user (${snapshot.confirmationDetails?.title ?? call.geminiName})`,
      settled_by: null, delivered: 'pushed',
    };
    call.card = card;
    call.correlationId = snapshot.correlationId;
    this.cards.push({card, call});
    return failure('APPROVAL-PENDING', 'the call waits for the user in the parent session',
      {card}, false);
  }

  async decideCard(cardId, decision) {
    const entry = this.cards.find((c) => c.card.id === cardId);
    if (!entry) throw new ProtocolError('CARD-NOT-FOUND', `no card ${cardId}`, ['args', 'card']);
    if (entry.card.state !== 'pending') {
      throw new ProtocolError('CARD-ALREADY-SETTLED', `${cardId} is ${entry.card.state}`, ['args', 'card']);
    }
    const approve = decision === 'approve';
    entry.card.state = approve ? 'approved' : 'denied';
    entry.card.settled_by = 'user';
    await this.config.getMessageBus().publish({
      type: this.core.MessageBusType.TOOL_CONFIRMATION_RESPONSE,
      correlationId: entry.call.correlationId, confirmed: approve,
      outcome: approve ? 'proceed_once' : 'cancel'});
    const result = await this.outcome(entry.call);
    return {card: entry.card, result};
  }

  envelope(call, part) {
    const response = part.functionResponse.response ?? {};
    const snapshot = this.updates.get(call.callId);
    if (response.error === undefined && snapshot?.status !== 'error' && snapshot?.status !== 'cancelled') {
      if (call.mcp && typeof response.output === 'string') {
        // Gemini turns the MCP result's text blocks into one text part; back into a block
        return {ok: true, content: {content: [{type: 'text', text: response.output}]}};
      }
      return {ok: true, content: response.output ?? response};
    }
    const message = String(response.error ?? snapshot?.response?.error?.message ?? 'error');
    if (/is not available to this agent/.test(message)) {
      return failure('tool_not_mounted', message, {tool: call.tool,
        mounted: call.agent.toolNames.filter((n) => n !== this.core.COMPLETE_TASK_TOOL_NAME).map(toCapconf)}, true);
    }
    const errorType = snapshot?.response?.errorType;
    if (snapshot?.status === 'cancelled' || call.card?.state === 'denied') {
      return failure('APPROVAL-DENIED', message, {reason: 'user'}, true);
    }
    if (errorType === 'policy_violation') {
      return failure('APPROVAL-DENIED', message, {reason: 'policy', error_type: errorType}, true);
    }
    if (call.mcp) {
      const mapped = mcpError(errorType);
      if (mapped) return failure(mapped.code, message, {error_type: errorType ?? null, ...mapped.detail}, mapped.terminal);
    }
    return failure(errorType ?? 'tool_error', message, {error_type: errorType ?? null}, true);
  }

  stop(agentId) {
    const root = this.agent(agentId);
    const order = [];
    const visit = (a) => {
      for (const child of this.agents.values()) if (child.parent === a.id) visit(child);
      order.push(a);
    };
    visit(root);
    const settled = [];
    const results = [];
    const stopped = [];
    for (const a of order) {
      if (a.stopped) continue;
      for (const entry of this.cards) {
        if (entry.call.agent === a && entry.card.state === 'pending') {
          entry.card.state = 'denied';
          entry.card.settled_by = 'task-stop';
          settled.push(entry.card);
          results.push(failure('APPROVAL-DENIED', 'the agent was stopped', {reason: 'task-stop'}, true));
        }
      }
      a.stopped = true;
      a.abort.abort();
      stopped.push(a.id);
    }
    return {settled, results, stopped};
  }

  cardsList() {
    const agents = [...this.agents.values()].map((a) => ({
      agent: a.id, name: a.name, background: a.background,
      status: a.stopped ? 'stopped'
        : this.cards.some((c) => c.call.agent === a && c.card.state === 'pending') ? 'suspended' : 'running',
    }));
    return {cards: this.cards.map((c) => c.card), agents, parent_live: this.parentLive, policy: this.policy};
  }
}

/** A `systemInstruction` (a string, a Content or a list of parts) as its text. */
function instructionText(instruction) {
  if (instruction === undefined || instruction === null) return '';
  if (typeof instruction === 'string') return instruction;
  const parts = Array.isArray(instruction) ? instruction : instruction.parts ?? [];
  return parts.map((p) => (typeof p === 'string' ? p : p?.text ?? '')).join('');
}

/** Gemini's agent loop for `agent` has ended (its own terminate reason or error): Gemini
 * has no live agent to take a call, which is what the protocol's `no_such_agent` says. */
function loopEnded(agent) {
  return new ProtocolError('no_such_agent', `Gemini's agent loop for ${agent.id} has ended `
    + `(${agent.error ?? agent.output?.terminate_reason ?? 'no reason given'})`, ['args', 'agent']);
}

function functionResponse(request, callId) {
  const last = request.contents?.[request.contents.length - 1];
  return (last?.parts ?? []).find((p) => String(p.functionResponse?.id ?? '').endsWith(callId)) ?? null;
}

export function failure(code, message, detail, terminal) {
  return {ok: false, error_code: code, error_message: message, error_detail: detail,
    terminal_for_attempt: terminal, retry_after_ms: null};
}

function summary(args) {
  const text = canonicalJson(args);
  const points = [...text];
  return points.length > 200 ? `${points.slice(0, 200).join('')}...` : text;
}

export {argsToCapconf};

/** The world's server table (`mcpServers`, or the list form) as name -> entry, or null. */
export function worldServers(world) {
  const mcp = world.raw?.mcp;
  if (!mcp || typeof mcp !== 'object') return null;
  if (mcp.mcpServers && typeof mcp.mcpServers === 'object') return mcp.mcpServers;
  if (Array.isArray(mcp.servers)) {
    return Object.fromEntries(mcp.servers.filter((s) => s && typeof s.name === 'string').map((s) => [s.name, s]));
  }
  return null;
}

/**
 * The world's MCP settings in Gemini's settings vocabulary, for Gemini's own
 * `createPolicyEngineConfig`: a server's approval allow-list (`allow`) is Gemini's
 * `tools.allowed` with each tool under the name Gemini's MCP client gives it
 * (`generateValidName`), and a disabled server (`enabled: false`) is in `mcp.excluded`.
 */
function mcpSettings(core, world) {
  const servers = worldServers(world);
  if (!servers) return {};
  const allowed = [];
  const excluded = [];
  for (const [name, entry] of Object.entries(servers)) {
    for (const tool of Array.isArray(entry?.allow) ? entry.allow : []) {
      if (typeof tool === 'string') allowed.push(core.generateValidName(`${name}${core.MCP_QUALIFIED_NAME_SEPARATOR}${tool}`));
    }
    if (entry?.enabled === false) excluded.push(name);
  }
  return {...(allowed.length ? {tools: {allowed}} : {}), ...(excluded.length ? {mcp: {excluded}} : {})};
}

/**
 * capconf's `mcp_call {name: "server__tool", arguments}` in Gemini's words: the model calls
 * the tool Gemini's MCP client mounted for it (`generateValidName(server + "_" + tool)`)
 * with the arguments themselves. The name is split at its first `__` (SPEC N-3); any other
 * shape, and `mcp_search` / `mcp_describe`, reach Gemini as written (it has no gateway).
 */
function mcpCall(core, tool, args) {
  if (tool !== 'mcp_call' || typeof args?.name !== 'string') return null;
  const at = args.name.indexOf('__');
  if (at <= 0 || at + 2 >= args.name.length) return null;
  const server = args.name.slice(0, at);
  const name = args.name.slice(at + 2);
  return {name: core.generateValidName(`${server}${core.MCP_QUALIFIED_NAME_SEPARATOR}${name}`),
    args: args.arguments === undefined ? {} : args.arguments};
}

/**
 * Gemini's answer to a failed MCP call, by its ToolErrorType -> capconf's MCP error code
 * (SPEC MCP-03's table). Gemini's MCP client reports a failed request (timeout, closed
 * connection, JSON-RPC error) as an `isError` result too, so that is all it says.
 */
const MCP_ERRORS = Object.freeze({mcp_tool_error: {code: 'MCP-TOOL-ERROR', terminal: null}});

function mcpError(errorType) {
  const row = MCP_ERRORS[errorType];
  return row ? {code: row.code, terminal: row.terminal, detail: {}} : null;
}
