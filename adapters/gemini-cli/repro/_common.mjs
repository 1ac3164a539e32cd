// Shared by the reproductions: load Gemini CLI core with its console on stderr, and print
// one JSON verdict line. Exit 0 when the behaviour is shown, 1 when it is not (Gemini
// changed: re-check the baseline entry that cites this script).
for (const k of ['log', 'debug', 'info', 'warn', 'error']) {
  console[k] = (...a) => process.stderr.write(`${a.map(String).join(' ')}\n`);
}

export const core = await import('@google/gemini-cli-core');

export function verdict(name, reproduced, evidence) {
  process.stdout.write(`${JSON.stringify({repro: name, reproduced, evidence})}\n`);
  process.exit(reproduced ? 0 : 1);
}

/** Gemini's own agent loader on inline text (the path is only a label). */
export async function loadAgent(text) {
  try {
    const defs = await core.parseAgentMarkdown('/repro/agent.md', text);
    return {loaded: true, defs};
  } catch (error) {
    return {loaded: false, error: String(error.message)};
  }
}
