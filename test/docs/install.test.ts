/**
 * The README's install section keeps its promises: the Node versions it states are ones every locked
 * package accepts (so `npm ci` prints no engine warning on them), and its install line needs no root and
 * leaves nothing in the checkout.
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { dev?: boolean; optional?: boolean; engines?: { node?: string } | string[] }>;
};

/**
 * Development packages whose `engines.node` does not apply to what they run: the real Claude Code the
 * compatibility test drives is a native program (its platform package's binary), though its wrapper
 * package asks for Node 22. The README names each one, with the one warning `npm ci` prints for it.
 */
const NATIVE_PROGRAMS = ['node_modules/@anthropic-ai/claude-code'];

/** The packages whose `engines.node` refuses `version`. */
function refusing(version: string, includeDev: boolean): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && (includeDev || entry.dev !== true))
    .filter(([path, entry]) => !(entry.dev === true && NATIVE_PROGRAMS.includes(path)))
    .filter(([, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      return range !== undefined && !semver.satisfies(semver.coerce(version)!, range);
    })
    .map(([path, entry]) => `${path} (${(entry.engines as { node: string }).node})`);
}

describe('README install', () => {
  it('states Node versions every locked package accepts: the runtime ones, and all of them for building', () => {
    const runtime = /for Node ≥ (\d+\.\d+(?:\.\d+)?)/.exec(readme)?.[1];
    const building = /building takes Node ≥ (\d+\.\d+(?:\.\d+)?)/.exec(readme)?.[1];
    expect(runtime).toBeDefined();
    expect(building).toBeDefined();
    expect(refusing(runtime!, false)).toEqual([]);
    expect(refusing(building!, true)).toEqual([]);
  });

  it('names each development package whose engine range does not apply, and why', () => {
    for (const path of NATIVE_PROGRAMS) {
      expect(lock.packages[path]?.dev).toBe(true);
      expect(readme).toContain(`\`${path.replace('node_modules/', '')}\``);
    }
  });

  it('installs from a checkout without root and without leaving the packed file in the checkout', () => {
    const block = /## Install[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(block).toContain('npm pack --silent --pack-destination "$dir"');
    expect(block).toMatch(/npm install -g --prefix ~\/\.local /);
    expect(block).not.toMatch(/npm install -g "\$\(npm pack/);
  });
});
