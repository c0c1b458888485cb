// parse.mjs -- Mermaid itself (npm's mermaid, offline in node) parses each
// diagram `commsim export --format mermaid` wrote: it must be a
// sequenceDiagram Mermaid accepts. One line "FILE: error" per bad one,
// status 1 if any. ./setup installs mermaid here (package.json) with npm.
//   node parse.mjs FILE.mmd...
import fs from 'node:fs';
import mermaid from 'mermaid';

let bad = 0;
for (const f of process.argv.slice(2)) {
  try {
    const r = await mermaid.parse(fs.readFileSync(f, 'utf8'));
    if (!r || r.diagramType !== 'sequence') {
      console.log(`${f}: parsed as ${r ? r.diagramType : 'nothing'}, not a sequence diagram`);
      bad++;
    }
  } catch (e) {
    console.log(`${f}: ${String(e.message || e).split('\n').slice(0, 3).join(' ')}`);
    bad++;
  }
}
process.exit(bad ? 1 : 0);
