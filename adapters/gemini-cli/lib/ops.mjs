// The driver ops the adapter serves, each a translation onto Gemini CLI's own code.
// Ops of groups the adapter does not declare answer `not_implemented` (SPEC PROTO-03).

import {BadRequest, loadWithGemini, normalised} from './definition.mjs';
import {GeminiWorld, ProtocolError, TIER_TO_MODE, worldServers} from './runtime.mjs';
import {registryJson, validateWorld} from './world.mjs';
import {decide} from './decide.mjs';
import {toCapconf, toGemini} from './vocabulary.mjs';

export const FEATURES = ['def', 'tool', 'prompt', 'approval', 'mcp'];

export class Session {
  constructor(core, genai, version) {
    this.core = core;
    this.genai = genai;
    this.version = version;
    this.world = null;
  }

  needWorld() {
    if (!this.world) throw new ProtocolError('no_world', 'call world.setup first');
    return this.world;
  }

  async handle(op, args) {
    const fn = OPS[op];
    if (!fn) throw new ProtocolError('not_implemented', `op ${op} is not served by the Gemini CLI adapter`);
    return fn(this, args);
  }
}

async function load(session, args) {
  const world = session.needWorld();
  try {
    return await loadWithGemini(session.core, world.scratch, args,
      {servers: worldServers(world.world), timeoutMs: world.world.raw.mcp?.timeout_ms});
  } catch (error) {
    if (error instanceof BadRequest) throw new ProtocolError('bad_request', error.message, error.path);
    throw error;
  }
}

/** What Gemini mounted for the declared names, in capconf's words and declared order. */
async function grants(session, loaded) {
  const world = session.world;
  const mounted = new Set(await world.agentToolNames(loaded.definition));
  const declared = loaded.declaredTools;
  if (declared === null) {
    return {tools: [...mounted].map(toCapconf), resolution: []};
  }
  const tools = [];
  const resolution = [];
  for (const name of declared) {
    const gemini = typeof name === 'string' ? toGemini(name) : name;
    const granted = typeof name === 'string' && mounted.has(gemini) && !tools.includes(toCapconf(gemini));
    if (granted) tools.push(toCapconf(gemini));
    resolution.push({declared: String(name), canonical: granted ? toCapconf(gemini) : null,
      status: granted ? 'granted' : 'unknown'});
  }
  return {tools, resolution};
}

const ASK_POLICIES = ['ask-parent', 'never-ask'];

const OPS = {
  hello(session) {
    return {implementation: {name: 'gemini-cli-core', version: session.version, language: 'javascript'},
      spec_version: '0.1.0', features: FEATURES};
  },

  'world.setup'(session, args) {
    if (session.world) session.world.dispose();
    session.world = null;
    const world = validateWorld(session.core, args);
    session.world = new GeminiWorld(session.core, session.genai, world);
    return {registry: registryJson(world)};
  },

  'registry.list'(session) {
    return registryJson(session.needWorld().world);
  },

  async 'definition.parse'(session, args) {
    if ('mode' in args && !['parse', 'save'].includes(args.mode)) {
      throw new ProtocolError('bad_request', '`mode` is parse or save', ['args', 'mode']);
    }
    const loaded = await load(session, args);
    if (!loaded.ok) {
      return {loaded: false, definition: null, tools: [], tool_resolution: [], diagnostics: loaded.diagnostics};
    }
    const {tools, resolution} = await grants(session, loaded);
    return {loaded: true, definition: normalised(loaded), tools, tool_resolution: resolution,
      diagnostics: []};
  },

  async 'tools.mounted'(session, args) {
    const loaded = await load(session, args);
    if (!loaded.ok) throw new ProtocolError('definition_invalid', loaded.error ?? 'Gemini CLI refused the agent');
    const world = session.world;
    await world.ensureConfig();
    const executor = await session.core.LocalAgentExecutor.create(loaded.definition, world.config, () => {});
    const tools = executor.toolRegistry.getAllTools()
      .filter((t) => t.name !== session.core.COMPLETE_TASK_TOOL_NAME)
      .map((t) => ({name: toCapconf(t.name), description: t.schema?.description ?? '',
        input_schema: t.schema?.parametersJsonSchema ?? t.schema?.parameters ?? {type: 'object'}}));
    return {tools, diagnostics: []};
  },

  async 'agent.spawn'(session, args) {
    const loaded = await load(session, args);
    if (!loaded.ok) throw new ProtocolError('definition_invalid', loaded.error ?? 'Gemini CLI refused the agent');
    const world = session.world;
    if (args.parent !== undefined && args.parent !== null) world.agent(args.parent);
    const agent = await world.spawn(loaded, args);
    const {tools} = await grants(session, loaded);
    return {agent: agent.id, tools, diagnostics: []};
  },

  async 'tool.call'(session, args) {
    const world = session.needWorld();
    if (typeof args.agent !== 'string') throw new ProtocolError('bad_request', 'missing `agent`', ['args', 'agent']);
    if (typeof args.tool !== 'string') throw new ProtocolError('bad_request', 'missing `tool`', ['args', 'tool']);
    if (args.args !== undefined && (args.args === null || typeof args.args !== 'object' || Array.isArray(args.args))) {
      throw new ProtocolError('bad_request', '`args` of the call must be an object', ['args', 'args']);
    }
    return world.toolCall(args.agent, args.tool, args.args ?? {});
  },

  'approval.setup'(session, args) {
    const world = session.needWorld();
    const tier = args.tier;
    if (typeof tier !== 'string') throw new ProtocolError('bad_request', 'missing `tier`', ['args', 'tier']);
    if (!Object.hasOwn(TIER_TO_MODE, tier)) {
      throw new ProtocolError('bad_request', `Gemini CLI has no approval mode for the tier ${tier}`, ['args', 'tier']);
    }
    const attendance = args.attendance ?? 'attended';
    if (!['attended', 'unattended'].includes(attendance)) throw new ProtocolError('bad_request', 'bad `attendance`', ['args', 'attendance']);
    const askPolicy = args.ask_policy ?? 'ask-parent';
    if (!ASK_POLICIES.includes(askPolicy)) throw new ProtocolError('bad_request', 'bad `ask_policy`', ['args', 'ask_policy']);
    const roots = args.writable_roots ?? [];
    if (!Array.isArray(roots) || roots.some((r) => typeof r !== 'string')) {
      throw new ProtocolError('bad_request', '`writable_roots` must be a list of paths', ['args', 'writable_roots']);
    }
    if (world.config) throw new ProtocolError('bad_request', 'approval.setup after the session started: Gemini fixes its approval mode and interactivity when the session is built');
    world.policy = {tier, attendance, ask_policy: askPolicy, writable_roots: roots};
    return {policy: world.policy};
  },

  'approval.decide'(session, args) {
    return decide(session.core, session.needWorld(), args);
  },

  'cards.list'(session) {
    return session.needWorld().cardsList();
  },

  async 'card.decide'(session, args) {
    const world = session.needWorld();
    if (typeof args.card !== 'string') throw new ProtocolError('bad_request', 'missing `card`', ['args', 'card']);
    if (!['approve', 'deny'].includes(args.decision)) throw new ProtocolError('bad_request', '`decision` is approve or deny', ['args', 'decision']);
    return world.decideCard(args.card, args.decision);
  },

  async 'task.stop'(session, args) {
    const world = session.needWorld();
    if (typeof args.agent !== 'string') throw new ProtocolError('bad_request', 'missing `agent`', ['args', 'agent']);
    return world.stop(args.agent);
  },

  async 'prompt.assemble'(session, args) {
    const loaded = await load(session, args);
    if (!loaded.ok) throw new ProtocolError('definition_invalid', loaded.error ?? 'Gemini CLI refused the agent');
    const prompt = await session.world.systemPrompt(loaded);
    return {prompt, parts: promptParts(prompt, loaded.definition.promptConfig?.systemPrompt ?? ''),
      diagnostics: []};
  },

  // APPR-05's pull ops, as the OpenCode adapter serves them: Gemini publishes every
  // confirmation request on its message bus when it is raised (cards say `pushed`), so a
  // pull hands out nothing; whether a parent request is live is bookkeeping.
  'snapshot.pull'(session) {
    session.needWorld();
    return {delivered: []};
  },

  'parent.request.start'(session) {
    const world = session.needWorld();
    if (world.parentLive) throw new ProtocolError('PARENT-REQUEST-LIVE', 'a parent request is live');
    world.parentLive = true;
    return {delivered: []};
  },

  'parent.request.end'(session) {
    const world = session.needWorld();
    if (!world.parentLive) throw new ProtocolError('PARENT-REQUEST-NOT-LIVE', 'no parent request is live');
    world.parentLive = false;
    return {parent_live: false};
  },

  shutdown() {
    return {};
  },
};

/**
 * Gemini's system prompt cut into capconf's parts (PROMPT-01) where its pieces sit: the
 * agent's own prompt (`body`) where Gemini put it, Gemini's text around it (`frame`). A
 * cut, never a composition: the bytes are Gemini's.
 */
export function promptParts(prompt, body) {
  const at = body ? prompt.indexOf(body) : -1;
  if (at < 0) return prompt ? [{kind: 'frame', text: prompt}] : [];
  const parts = [];
  if (at > 0) parts.push({kind: 'frame', text: prompt.slice(0, at)});
  parts.push({kind: 'body', text: body});
  if (at + body.length < prompt.length) parts.push({kind: 'frame', text: prompt.slice(at + body.length)});
  return parts;
}
