// The package is "type": "module", so dist/cjs needs its own package.json
// saying its .js files are CommonJS, or require() would read them as ESM.
import { writeFileSync } from 'node:fs';
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{"type":"commonjs"}\n');
