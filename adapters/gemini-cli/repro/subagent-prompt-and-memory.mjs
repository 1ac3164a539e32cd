// Design probe (kind b, why `prompt`, `memory` and `knowledge` are not declared), with
// Gemini's own loader, session and subagent prompt builder:
// (1) the loader refuses `memory:` and `knowledge:` keys (strict front-matter schema,
//     agents/agentLoader.js): a subagent cannot declare a memory mode or a source;
// (2) a subagent's system prompt (agents/local-executor.js buildSystemPrompt) starts with
//     the definition body and ends with Gemini's own fixed text (environment context and
//     "Important Rules"); there is no frame input. capconf's PROMPT-01 is frame, catalogs,
//     then the body last ("the body has the last word");
// (3) memory is the session's, not the subagent's: the user's ~/.gemini/GEMINI.md is
//     appended to every subagent's prompt, and core 0.61.0 registers no memory tool at all
//     (its prompt says "There is no `save_memory` tool"; memory files are edited with
//     write_file/replace), so there is nothing to map memory_read/memory_write onto.
import {loadAgent, verdict} from './_common.mjs';
import {scratch, session, subagentPrompt} from './_session.mjs';

const head = '---\nname: helper\ndescription: helps\ntools: [read_file]\n';
const memoryKey = await loadAgent(`${head}memory: private\n---\nHelp.\n`);
const knowledgeKey = await loadAgent(`${head}knowledge:\n  - {name: handbook, glob: docs/*.md}\n---\nHelp.\n`);
const dirs = scratch({'home/.gemini/GEMINI.md': 'USER-MEMORY-MARKER: prefers tabs\n'});
const config = await session(dirs);
const {prompt} = await subagentPrompt(config, dirs.root, `${head}---\nTHE-BODY-MARKER\n`);
const tools = config.getToolRegistry().getAllToolNames();
dirs.dispose();
const memoryTools = tools.filter((n) => /memory/i.test(n));
verdict('subagent-prompt-and-memory',
  !memoryKey.loaded && /memory/.test(memoryKey.error) && !knowledgeKey.loaded
    && /knowledge/.test(knowledgeKey.error) && prompt.startsWith('THE-BODY-MARKER')
    && /Important Rules:[\s\S]*$/.test(prompt) && !prompt.trimEnd().endsWith('THE-BODY-MARKER')
    && prompt.includes('USER-MEMORY-MARKER') && memoryTools.length === 0,
  {memory_key: memoryKey.error?.split('\n').slice(-1)[0] ?? 'accepted',
    knowledge_key: knowledgeKey.error?.split('\n').slice(-1)[0] ?? 'accepted',
    prompt_starts: prompt.slice(0, 15), prompt_ends: prompt.trimEnd().slice(-40),
    user_memory_in_subagent_prompt: prompt.includes('USER-MEMORY-MARKER'),
    session_memory_tools: memoryTools});
