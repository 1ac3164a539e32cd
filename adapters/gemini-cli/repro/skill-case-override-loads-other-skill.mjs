// google-gemini/gemini-cli#29150 (open): a workspace skill `PDF` meant to override the
// user's skill `pdf` does not override it (SkillManager.addSkillsWithPrecedence keys its
// map by the exact name), so both are offered, yet the lookup folds case (`getSkill`
// compares `toLowerCase()`) and returns the first match in discovery order, the user's.
// The model activates `PDF`, described as the workspace skill, and receives the other
// skill's instructions. capconf (SKILL-01): names compare ASCII case-insensitively, the
// first layer holding the name wins and the others are shadowed. The script discovers
// both with Gemini's own SkillManager and asks it for `PDF`.
import {core, verdict} from './_common.mjs';
import {scratch} from './_session.mjs';

const dirs = scratch({
  'home/.gemini/skills/pdf/SKILL.md': '---\nname: pdf\ndescription: user pdf\n---\nUSER BODY\n',
  'ws/.gemini/skills/pdf/SKILL.md': '---\nname: PDF\ndescription: workspace PDF\n---\nWORKSPACE BODY\n',
});
process.env.GEMINI_CLI_HOME = dirs.home;
const manager = new core.SkillManager();
await manager.discoverSkills(new core.Storage(dirs.workspace), [], true);
const offered = manager.getSkills().map((s) => s.name).filter((n) => n.toLowerCase() === 'pdf');
const loaded = manager.getSkill('PDF');
dirs.dispose();
verdict('skill-case-override-loads-other-skill',
  offered.length === 2 && loaded?.name === 'pdf' && loaded?.body === 'USER BODY',
  {offered, activate_PDF_returns: loaded ? {name: loaded.name, body: loaded.body} : null});
