// Prints the package's size as an app bundles it: dist/esm bundled and
// minified by esbuild, then gzipped at level 9. The target is under 15 KB.
import { buildSync } from 'esbuild';
import { gzipSync } from 'node:zlib';
const out = buildSync({ entryPoints: [new URL('../dist/esm/index.js', import.meta.url).pathname], bundle: true, minify: true, format: 'esm', write: false, platform: 'neutral' });
const code = out.outputFiles[0].contents;
const gz = gzipSync(code, { level: 9 }).length;
console.log(JSON.stringify({ minified_bytes: code.length, gzipped_bytes: gz }));
if (gz >= 15 * 1024) { console.error('over the 15 KB target'); process.exit(1); }
