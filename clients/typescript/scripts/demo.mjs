// Builds /demo's script: web/src/demo.js bundled with this package's source
// and minified into one file, web/static/demo.js, which the gateway embeds
// (the page's strict CSP allows only its own scripts, so the package ships
// inside it). `node scripts/demo.mjs` writes it; `--check` builds it afresh
// and fails if the committed file differs, which web's TestDemoBundleIsFresh
// runs, so the page cannot drift from the package's source.
import { buildSync } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../../../', import.meta.url);
const out = fileURLToPath(new URL('web/static/demo.js', root));
const built = buildSync({
  entryPoints: [fileURLToPath(new URL('web/src/demo.js', root))],
  bundle: true, minify: true, format: 'iife', target: 'es2020', write: false, legalComments: 'none',
  banner: { js: '// Built from web/src/demo.js and clients/typescript/src by `node clients/typescript/scripts/demo.mjs`; do not edit.' },
}).outputFiles[0].text;

if (process.argv.includes('--check')) {
  let committed = '';
  try { committed = readFileSync(out, 'utf8'); } catch { /* missing: a difference */ }
  if (committed !== built) {
    console.error('web/static/demo.js is not a fresh build of web/src/demo.js and the package: run node clients/typescript/scripts/demo.mjs');
    process.exit(1);
  }
  console.log(`demo: web/static/demo.js is fresh (${built.length} bytes)`);
} else {
  writeFileSync(out, built);
  console.log(`demo: wrote web/static/demo.js (${built.length} bytes)`);
}
