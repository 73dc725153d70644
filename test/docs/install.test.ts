/**
 * The README's install section keeps its promises: the Node versions it states are ones every locked
 * package accepts (so `npm ci` prints no engine warning on them), and its install line needs no root and
 * leaves nothing in the checkout.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { dev?: boolean; optional?: boolean; engines?: { node?: string } | string[] }>;
};

type Version = [number, number, number];

function parseVersion(text: string): Version {
  const [major = 0, minor = 0, patch = 0] = text
    .split('.')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : 0));
  return [major, minor, patch];
}

function compare(left: Version, right: Version): number {
  for (let index = 0; index < 3; index++)
    if (left[index] !== right[index]) return left[index]! - right[index]!;
  return 0;
}

/**
 * Whether `version` satisfies an `engines.node` range, in the forms the lock file holds: `*`, `>=V`,
 * `<=V`, `^V`, a bare `V` (that major, or major.minor), comparators joined by spaces, alternatives by `||`.
 */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .replace(/([<>]=?)\s+/g, '$1')
      .split(/\s+/)
      .every((comparator) => {
        if (comparator === '*' || comparator === '') return true;
        const match = /^(>=|<=|\^)?v?([\dx.]+)$/.exec(comparator);
        if (match === null) throw new Error(`unknown engines range ${JSON.stringify(range)}`);
        const bound = parseVersion(match[2]!);
        switch (match[1]) {
          case '>=':
            return compare(version, bound) >= 0;
          case '<=':
            return compare(version, bound) <= 0;
          case '^':
            return version[0] === bound[0] && compare(version, bound) >= 0;
          case undefined:
          default: {
            const parts = match[2]!.split('.').filter((part) => /^\d+$/.test(part)).length;
            return version.slice(0, parts).every((part, index) => part === bound[index]);
          }
        }
      }),
  );
}

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
      return range !== undefined && !satisfies(parseVersion(version), range);
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
