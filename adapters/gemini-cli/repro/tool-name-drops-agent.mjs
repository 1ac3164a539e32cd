// #19599 (google-gemini/gemini-cli): a tool name Gemini's name check refuses (an MCP tool
// in another runtime's spelling, a name in other case, an unknown tool) makes the whole
// agent fail to load ("Invalid tool name"), instead of that one name being reported and
// the rest granted (capconf TOOL-03, DEF-06).
import {loadAgent, verdict} from './_common.mjs';

const names = ['mcp__crm__find_contact', 'Read_File', 'google_search'];
const results = {};
for (const name of names) {
  results[name] = await loadAgent(`---\nname: r\ndescription: d\ntools: [read_file, ${name}]\n---\nWork.\n`);
}
const reproduced = Object.values(results).every((r) => !r.loaded && /Invalid tool name/.test(r.error));
verdict('tool-name-drops-agent', reproduced, results);
