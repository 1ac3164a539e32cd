// A subagent's inline `mcp_servers` entry with `include_tools: [findcontact]` against a
// server tool `findContact`: Gemini's loader accepts the agent with no diagnostic, and its
// discovery filter (`isEnabled`, tools/mcp-client.js) drops the tool silently, so the
// agent gets no tool and nobody is told why. (A capconf-style run with a fake server shows
// the same: the server's journal has `tools/list` and no call.) capconf's rule (DEF-06,
// TOOL-02): a declared name that matches nothing is kept and reported, never dropped.
import {core, loadAgent, verdict} from './_common.mjs';

const text = '---\nname: crm\ndescription: d\ntools: [read_file]\nmcp_servers:\n  crm:\n'
  + '    command: node\n    include_tools: [findcontact]\n---\nWork.\n';
const loaded = await loadAgent(text);
const definition = loaded.loaded ? core.markdownToAgentDefinition(loaded.defs[0]) : null;
const server = definition?.mcpServers?.crm;
const listed = {name: 'findContact', description: 'Find a contact'};
const exact = core.isEnabled(listed, 'crm', {includeTools: ['findContact']});
const folded = server ? core.isEnabled(listed, 'crm', server) : null;
const reproduced = loaded.loaded && server !== undefined && exact === true && folded === false;
verdict('include-tools-case-drops-tool', reproduced,
  {loaded: loaded.loaded, include_tools: server?.includeTools ?? null,
    enabled_exact: exact, enabled_as_declared: folded});
