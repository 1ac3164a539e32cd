// #26015 (google-gemini/gemini-cli): one key Gemini's strict schema does not know, even
// the documented `mcpServers`, or another runtime's `color`, and the whole agent is not
// loaded. capconf (DEF-06) keeps the agent and reports the key.
import {loadAgent, verdict} from './_common.mjs';

const cases = {
  mcpServers: '---\nname: crm\ndescription: d\ntools: [read_file]\nmcpServers:\n  crm:\n    command: node\n---\nWork.\n',
  color: '---\nname: crm\ndescription: d\ntools: [read_file]\ncolor: blue\n---\nWork.\n',
};
const results = {};
for (const [key, text] of Object.entries(cases)) results[key] = await loadAgent(text);
const reproduced = Object.values(results).every((r) => !r.loaded && /Unrecognized key/.test(r.error));
verdict('unknown-key-drops-agent', reproduced, results);
