import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildForChildren } from './harness/build.js';
const root = buildForChildren();
const script = `const t0=performance.now();await import('typebox');const t1=performance.now();await import('${join(root, 'src/protocol/validate-messages.js')}');const t2=performance.now();await import('${join(root, 'src/cli/commands.js')}');const t3=performance.now();console.log(JSON.stringify({typebox:t1-t0, validators:t2-t1, rest:t3-t2, total:t3}));`;
for (let i = 0; i < 3; i++) console.log(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root }).toString().trim());
const t = performance.now();
execFileSync(process.execPath, [join(root, 'src/cli.js'), '--version'], { cwd: root });
console.log('tpx --version wall ms', (performance.now() - t).toFixed(0));
