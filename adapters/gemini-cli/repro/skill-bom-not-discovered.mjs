// A SKILL.md saved with a UTF-8 byte order mark is silently not a skill: Gemini's skill
// loader (`loadSkillFromFile`, skills/skillLoader.js) reads the file with
// `fs.readFile(path, 'utf-8')`, which keeps the BOM, and its FRONTMATTER_REGEX must match
// `---` at offset 0, so the file has "no frontmatter" and discovery skips it without a
// word (a debug line at most). Known upstream: google-gemini/gemini-cli PR #28042 (open)
// changes FRONTMATTER_REGEX to strip a BOM. capconf (SPEC section 6, "Skill packages"): a
// leading BOM is ignored, and a package that cannot be read is reported, never dropped.
// The script lays out the same skill with and without a BOM and discovers both folders
// with Gemini's own `loadSkillsFromDir`.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {core, verdict} from './_common.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repro-skill-bom-'));
const text = (name) => `---\nname: ${name}\ndescription: Fill in PDF forms\n---\nSteps.\n`;
for (const [folder, bytes] of [['plain', text('plain')], ['bom', `\ufeff${text('bom')}`]]) {
  fs.mkdirSync(path.join(dir, folder));
  fs.writeFileSync(path.join(dir, folder, 'SKILL.md'), bytes);
}
const found = (await core.loadSkillsFromDir(dir)).map((s) => s.name).sort();
const direct = await core.loadSkillFromFile(path.join(dir, 'bom', 'SKILL.md'));
fs.rmSync(dir, {recursive: true, force: true});
verdict('skill-bom-not-discovered', found.includes('plain') && !found.includes('bom') && direct === null,
  {discovered: found, bom_file_loaded: direct !== null});
