// Design probe (kind b, why `skills` is not declared): Gemini CLI has no per-subagent skill
// list. (1) Its agent loader refuses a `skills` key (the front-matter schema is strict,
// agents/agentLoader.js localAgentSchema); a declarative `skills` field for subagents is
// an open request, google-gemini/gemini-cli#18436, and "scoped skills (restricting skill
// visibility to specific agent IDs)" is open in #18276. (2) A subagent whose `tools` list
// `activate_skill` is offered every skill of the session, its built-in skills included
// (agents/local-executor.js buildSystemPrompt renders `getSkillManager().getSkills()`),
// and `activate_skill` loads any of them (tools/activate-skill.js: the session's
// SkillManager, its schema an enum of every discovered name). (3) One without the tool is
// offered none. capconf's SKILL-01/SKILL-02 make `skills` a per-subagent allow-list, so
// an adapter would have to decide the grant itself.
import {loadAgent, verdict} from './_common.mjs';
import {scratch, session, subagentPrompt} from './_session.mjs';

const skill = (name, d) => `---\nname: ${name}\ndescription: ${d}\n---\n${name} steps.\n`;
const dirs = scratch({'home/.gemini/skills/pdf/SKILL.md': skill('pdf', 'Fill in PDF forms'),
  'home/.gemini/skills/payroll/SKILL.md': skill('payroll', 'Secret payroll process')});
const declared = await loadAgent('---\nname: helper\ndescription: helps\ntools: [read_file]\n'
  + 'skills: [pdf]\n---\nHelp.\n');
const config = await session(dirs);
const agent = (tools) => `---\nname: helper\ndescription: helps\ntools: [${tools}]\n---\nHelp.\n`;
const withTool = await subagentPrompt(config, dirs.root, agent('read_file, activate_skill'));
const without = await subagentPrompt(config, dirs.root, agent('read_file'));
const offered = [...withTool.prompt.matchAll(/<name>([^<]*)<\/name>/g)].map((m) => m[1]);
const schema = withTool.executor.toolRegistry.getTool('activate_skill')?.schema?.parametersJsonSchema;
dirs.dispose();
const builtin = offered.filter((n) => n !== 'pdf' && n !== 'payroll');
verdict('skills-are-session-wide',
  !declared.loaded && /skills/.test(declared.error)
    && offered.includes('pdf') && offered.includes('payroll') && builtin.length > 0
    && !/<available_skills>/.test(without.prompt),
  {skills_key: declared.loaded ? 'accepted' : declared.error.split('\n').slice(-1)[0],
    offered_with_activate_skill: offered, activatable: schema?.properties?.name?.enum ?? null,
    offered_without: /<available_skills>/.test(without.prompt) ? 'a catalog' : 'none'});
