// What Gemini's code does at the delegation boundary, without capconf, in the default
// approval mode of an interactive session:
// 1. `invoke_agent` itself asks nobody (policies/agents.toml: "Allow invoke_agent" in
//    default, autoEdit and yolo), as capconf's APPR-03 wants of Task;
// 2. a gated call of the child (`write_file`) is not denied at once: it waits for the
//    user (`awaiting_approval` on the session's bus, the child's MessageBus is the
//    parent's `derive(name)`), where capconf's APPR-06 pins a delegated child to
//    never-ask; the file is not written while it waits;
// 3. aborting the parent's call (the user's cancel) ends the child with it: the parent's
//    call is `cancelled`, and so is the child's waiting call, which never runs (DELEG-06's
//    cascade is Gemini's too, for its one level);
// 4. an unknown agent is refused with "Subagent 'x' not found." and the message does not
//    name the agents that exist (DELEG-01 wants them listed; Gemini lists them in the main
//    agent's system prompt instead).
import * as fs from 'node:fs';
import {core, verdict} from './_common.mjs';
import {session} from './_delegation_session.mjs';

const s = await session({mode: 'default', coreTools: ['write_file', 'invoke_agent'],
  agents: {writer: '---\nname: writer\ndescription: writes\ntools: [write_file]\n---\nWrite.\n'}});

const unknown = await s.call('invoke_agent', {agent_name: 'nope', prompt: 'x'}).promise;
const unknownText = JSON.stringify(unknown?.response?.responseParts ?? []);

const parent = s.call('invoke_agent', {agent_name: 'writer', prompt: 'write a file'});
const first = await s.model.nextTurn(); // no ask for invoke_agent: the child already runs
const parentAsked = s.updates.some((c) => c.request?.callId === parent.callId && c.status === 'awaiting_approval');
const waiting = new Promise((resolve) => {
  const seen = () => s.updates.find((c) => c.request?.callId?.endsWith('child-1') && c.status === 'awaiting_approval');
  if (seen()) { resolve(seen()); return; }
  s.config.getMessageBus().subscribe(core.MessageBusType.TOOL_CALLS_UPDATE, () => { if (seen()) resolve(seen()); });
});
first.resolve([{functionCall: {id: 'child-1', name: 'write_file',
  args: {file_path: `${s.workspace}/child.txt`, content: 'x'}}}]);
const ask = await waiting;
const writtenWhileAsking = fs.existsSync(`${s.workspace}/child.txt`);
parent.abort.abort();
const stopped = await parent.promise;
const writtenAfterStop = fs.existsSync(`${s.workspace}/child.txt`);
const childAfterStop = s.updates.filter((c) => c.request?.callId?.endsWith('child-1')).at(-1)?.status ?? null;
s.dispose();

const reproduced = unknown?.status === 'error' && /Subagent 'nope' not found/.test(unknownText)
  && !/writer/.test(unknownText)
  && !parentAsked && ask?.status === 'awaiting_approval' && !writtenWhileAsking
  && stopped?.status === 'cancelled' && !writtenAfterStop && childAfterStop === 'cancelled';
verdict('delegated-child-asks-the-user', reproduced, {
  unknown_agent: {status: unknown?.status ?? null, response: unknownText.slice(0, 200)},
  invoke_agent_asked: parentAsked, child_write: ask?.status ?? null,
  child_confirmation: ask?.confirmationDetails?.title ?? null,
  written_while_asking: writtenWhileAsking, parent_after_abort: stopped?.status ?? null,
  written_after_stop: writtenAfterStop, child_write_after_stop: childAfterStop});
