// An agent file saved with a UTF-8 byte order mark (as some Windows editors do) is
// refused as a whole: Gemini's front-matter pattern must match at offset 0 and the BOM is
// kept by `fs.readFile(path, 'utf-8')`, so the file "is missing its frontmatter". capconf
// (DEF-01) strips a leading BOM. The pattern is the skill loader's FRONTMATTER_REGEX
// (agents/agentLoader.js imports it); upstream PR #28042 (open) makes it strip a BOM.
// The script writes the same agent with and without a BOM and loads both from disk
// through Gemini's loader.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {core, verdict} from './_common.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repro-bom-'));
const text = '---\nname: helper\ndescription: helps\ntools: [read_file]\n---\nHelp.\n';
fs.writeFileSync(path.join(dir, 'plain.md'), text);
fs.writeFileSync(path.join(dir, 'bom.md'), `\ufeff${text}`);
const result = await core.loadAgentsFromDirectory(dir);
fs.rmSync(dir, {recursive: true, force: true});
const loaded = result.agents.map((a) => path.basename(a.metadata.filePath));
const errors = result.errors.map((e) => e.message);
verdict('bom-drops-agent', loaded.includes('plain.md') && !loaded.includes('bom.md')
  && errors.some((m) => /bom\.md.*frontmatter/is.test(m)), {loaded, errors});
