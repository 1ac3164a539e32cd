// Design probe (kind b): four rules of Gemini CLI's skill discovery that differ from
// capconf's section 6, each shown with Gemini's own SkillManager / loader:
// (1) a SKILL.md whose front matter is not valid YAML is still a skill: `parseFrontmatter`
//     falls back to a line parser "to handle descriptions with colons" (skills/skillLoader.js),
//     where capconf requires such a package to be reported and not discovered;
// (2) the folder form is not read: `skill.yaml` beside a SKILL.md is ignored and the
//     metadata comes from SKILL.md's front matter (the loader globs `*/SKILL.md` only);
// (3) precedence is the reverse of capconf's within a scope: the `.agents/skills` alias
//     wins over `.gemini/skills` (skills/skillManager.js discoverSkills adds it later and
//     "later wins"), while capconf's `workspace` layer wins over `ecosystem-workspace`;
// (4) the body is read once, at discovery: `activate_skill` returns the cached
//     `skill.body`, so an edit of SKILL.md during the session is not seen (capconf
//     SKILL-04: the body is loaded on demand from the current file).
import * as fs from 'node:fs';
import * as path from 'node:path';
import {core, verdict} from './_common.mjs';
import {scratch} from './_session.mjs';

const dirs = scratch({
  'home/a/broken/SKILL.md': '---\nname: broken\ndescription: [unclosed\n---\nBroken steps.\n',
  'home/a/shop/skill.yaml': 'name: shopping\ndescription: Buy things\n',
  'home/a/shop/SKILL.md': '---\nname: wrong\ndescription: wrong\n---\nSteps.\n',
  'ws/.gemini/skills/pdf/SKILL.md': '---\nname: pdf\ndescription: from .gemini\n---\nA.\n',
  'ws/.agents/skills/pdf/SKILL.md': '---\nname: pdf\ndescription: from .agents\n---\nB.\n',
});
const loaded = await core.loadSkillsFromDir(path.join(dirs.home, 'a'));
const names = loaded.map((s) => s.name).sort();
process.env.GEMINI_CLI_HOME = dirs.home;
const manager = new core.SkillManager();
await manager.discoverSkills(new core.Storage(dirs.workspace), [], true);
const pdf = manager.getSkill('pdf');
fs.writeFileSync(path.join(dirs.workspace, '.agents/skills/pdf/SKILL.md'),
  '---\nname: pdf\ndescription: from .agents\n---\nEDITED.\n');
const body = manager.getSkill('pdf')?.body;
fs.rmSync(dirs.root, {recursive: true, force: true});
verdict('skill-discovery-rules',
  names.includes('broken') && names.includes('wrong') && !names.includes('shopping')
    && pdf?.description === 'from .agents' && body === 'B.',
  {discovered: names, pdf_winner: pdf?.description ?? null, body_after_edit: body ?? null});
