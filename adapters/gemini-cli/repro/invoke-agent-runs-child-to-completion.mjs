// Gemini's own delegation, end to end and without capconf: the main session's scheduler
// runs `invoke_agent {agent_name, prompt}` (Gemini's AgentTool) for a user-level agent
// file, Gemini's LocalSubagentInvocation runs the child's own loop with a scripted model,
// and the child ends by calling `complete_task`. It shows two design choices that the
// capconf delegation model (SPEC 10a) does not share:
// 1. synchronous: while the child waits for its model the parent's `invoke_agent` call is
//    still `executing` and has no response; the response is the child's final result
//    (DELEG-01 wants an immediate hand-off, the report later in the parent's inbox);
//    Gemini issues #22741 and #27414 ask for background / asynchronous subagents;
// 2. depth 1: the child's definition lists `invoke_agent`, its model is never offered it
//    (LocalAgentExecutor.create skips every Kind.Agent tool: "We do not allow agents to
//    call other agents"), and asking for it anyway is "Unauthorized tool call"; Gemini
//    issue #22092 ("Allow agents to call agents") is the open request.
// Why no clock: every step waits on Gemini's own promises (the child's model request).
import {verdict} from './_common.mjs';
import {session} from './_delegation_session.mjs';

const s = await session({
  agents: {reader: '---\nname: reader\ndescription: reads\ntools: [read_file, invoke_agent]\n---\nRead.\n'},
  files: {'notes.txt': 'child-read-marker\n'}, coreTools: ['read_file', 'invoke_agent']});
const sessionTools = s.config.getToolRegistry().getAllToolNames();
const parent = s.call('invoke_agent', {agent_name: 'reader', prompt: 'read notes.txt'});

const first = await s.model.nextTurn(); // the child's loop asks its model: Gemini runs the child
const offered = s.offered(first);
const whileChildWaits = {parent_done: parent.state.done, parent_status: s.status(parent.callId)};
first.resolve([{functionCall: {id: 'child-1', name: 'invoke_agent',
  args: {agent_name: 'reader', prompt: 'deeper'}}}]);
const second = await s.model.nextTurn();
const refusal = s.lastParts(second);
second.resolve([{functionCall: {id: 'child-2', name: 'read_file',
  args: {file_path: `${s.workspace}/notes.txt`}}}]);
const third = await s.model.nextTurn();
const read = s.lastParts(third);
third.resolve([{functionCall: {id: 'child-3', name: 'complete_task',
  args: {result: 'child-report-marker'}}}]);
const done = await parent.promise;
const answer = JSON.stringify(done?.response?.responseParts ?? []);
s.dispose();

const reproduced = sessionTools.includes('invoke_agent') && !whileChildWaits.parent_done
  && whileChildWaits.parent_status === 'executing'
  && !offered.includes('invoke_agent') && offered.includes('read_file')
  && /Unauthorized tool call: 'invoke_agent'/.test(refusal)
  && /child-read-marker/.test(read) && done?.status === 'success'
  && /child-report-marker/.test(answer);
verdict('invoke-agent-runs-child-to-completion', reproduced, {
  session_tools: sessionTools, child_offered: offered, while_child_waits: whileChildWaits,
  child_asks_invoke_agent: refusal.slice(0, 200), parent_status: done?.status ?? null,
  parent_response: answer.slice(0, 300)});
