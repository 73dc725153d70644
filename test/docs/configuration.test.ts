/**
 * docs/configuration.md is the reference for every setting: each `TPX_*` variable the code reads and each
 * flag a `tpx` command's help offers must be in it, so a new setting cannot ship undocumented.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runTpx } from '../e2e/cli-process.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const reference = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === '__fixtures__' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('docs/configuration.md', () => {
  it('names every TPX_* environment variable the code reads', () => {
    const variables = new Set<string>();
    for (const file of sourceFiles(join(ROOT, 'src'))) {
      const text = readFileSync(file, 'utf8');
      // A constant named TPX_… in code is not a variable; the quoted names and `env.TPX_…` reads are.
      for (const match of text.matchAll(/['"`]?\b(TPX_[A-Z][A-Z0-9_]*)\b/g)) {
        if (new RegExp(`const ${match[1]!}\\b`).test(text)) continue;
        variables.add(match[1]!);
      }
    }
    expect(variables.size).toBeGreaterThan(10);
    expect([...variables].filter((name) => !reference.includes(name)).sort()).toEqual([]);
  });

  it("names every flag of every command's --help", { timeout: 60_000 }, async () => {
    const commands = ['claude', 'serve', 'doctor', 'send', 'mock-model', 'demo'];
    const helps = await Promise.all(commands.map((command) => runTpx([command, '--help'])));
    const flags = new Set<string>();
    for (const help of helps) {
      expect(help.code).toBe(0);
      for (const match of help.stdout.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) flags.add(match[0]);
    }
    flags.delete('--help');
    expect(flags.size).toBeGreaterThan(20);
    expect([...flags].filter((flag) => !reference.includes(flag)).sort()).toEqual([]);
  });
});
