// The scripted model: Gemini's content generator slot, filled with an object whose every
// answer the driver decides at run time. Why: nothing runs a real model offline, and a
// capconf `tool.call` is "the agent's model asks for this tool now"; so each agent's model
// turn blocks until the driver hands it the next function call, and Gemini's own agent
// loop (executor, scheduler, policy engine, message bus) does everything in between.

export class ScriptedModel {
  constructor(GenerateContentResponse) {
    this.Response = GenerateContentResponse;
    this.sessions = new Map(); // Gemini agentId -> AgentTurns
  }

  /** Register an agent's turn queue under the id Gemini's executor put in its prompt ids. */
  attach(geminiAgentId, turns) {
    this.sessions.set(geminiAgentId, turns);
  }

  response(parts) {
    const r = new this.Response();
    r.candidates = [{content: {role: 'model', parts}, finishReason: 'STOP', index: 0}];
    r.usageMetadata = {promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2};
    return r;
  }

  async generateContentStream(request, userPromptId, role) {
    const agentKey = String(userPromptId ?? '').split('#')[0];
    const turns = this.sessions.get(agentKey);
    if (!turns || role !== 'subagent') {
      // a utility call (loop detection, compression, next speaker): a neutral answer
      const parts = [{text: '{}'}];
      const self = this;
      return (async function* () { yield self.response(parts); })();
    }
    const parts = await turns.nextTurn(request);
    const self = this;
    return (async function* () { yield self.response(parts); })();
  }

  async generateContent() {
    return this.response([{text: '{}'}]);
  }

  async countTokens() {
    return {totalTokens: 1};
  }

  async embedContent() {
    return {embeddings: []};
  }
}

/**
 * One agent's side of the conversation: Gemini asks for a turn (`nextTurn`, with the
 * request holding the previous call's function response); the driver answers with
 * `play(parts)`. Both sides wait on each other through promises, never on a clock.
 */
export class AgentTurns {
  constructor() {
    this.pendingTurn = null; // {request, resolve} while Gemini waits for the model
    this.requestWaiters = [];
    this.requests = [];
  }

  nextTurn(request) {
    return new Promise((resolve) => {
      this.pendingTurn = {request, resolve};
      this.requests.push(request);
      const waiters = this.requestWaiters.splice(0);
      for (const w of waiters) w(request);
    });
  }

  /** Resolves with the next model request Gemini makes (or the current one if waiting). */
  whenWaiting() {
    if (this.pendingTurn) return Promise.resolve(this.pendingTurn.request);
    return new Promise((resolve) => this.requestWaiters.push(resolve));
  }

  /** Answer Gemini's pending model request with these parts. */
  play(parts) {
    const turn = this.pendingTurn;
    if (!turn) throw new Error('the agent is not waiting for its model');
    this.pendingTurn = null;
    turn.resolve(parts);
  }
}
