/**
 * Every package in `package.json` is justified in `docs/development.md`: runtime dependencies in the
 * "Runtime" table, development dependencies in the "Development" table, each with what it saves and
 * what it costs. A package added to `package.json` without a row fails here, and so does a row left
 * behind for a package that was removed.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface PackageJson {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

const packageJson = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as PackageJson;
const guide = readFileSync(new URL('../../docs/development.md', import.meta.url), 'utf8');

/** One table row: the packages its first cell names (in backticks), and its other cells. */
interface Row {
  packages: string[];
  cells: string[];
}

/** The rows of the first table under the `### <heading>` of the Dependencies section. */
function dependencyTable(markdown: string, heading: string): Row[] {
  const section = markdown.slice(markdown.indexOf('## Dependencies'));
  const start = section.indexOf(`\n### ${heading}\n`);
  if (start === -1) throw new Error(`docs/development.md: no "### ${heading}" under "## Dependencies"`);
  const lines = section
    .slice(start + 1)
    .split('\n')
    .slice(1);
  const next = lines.findIndex((line) => line.startsWith('#'));
  return (next === -1 ? lines : lines.slice(0, next))
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .slice(1) // the header row
    .map((line) => {
      const cells = line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim());
      const packages = [...cells[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
      return { packages, cells: cells.slice(1) };
    });
}

function listed(rows: Row[]): string[] {
  return rows.flatMap((row) => row.packages).sort();
}

describe('docs/development.md, Dependencies', () => {
  const runtime = dependencyTable(guide, 'Runtime');
  const development = dependencyTable(guide, 'Development');

  it('lists exactly the runtime dependencies of package.json', () => {
    expect(listed(runtime)).toEqual(Object.keys(packageJson.dependencies).sort());
  });

  it('lists exactly the development dependencies of package.json', () => {
    expect(listed(development)).toEqual(Object.keys(packageJson.devDependencies).sort());
  });

  it('says for every package what it saves and what it costs', () => {
    for (const row of [...runtime, ...development]) {
      expect(row.packages.length, row.cells.join(' | ')).toBeGreaterThan(0);
      expect(row.cells, row.packages.join(', ')).toHaveLength(2);
      for (const cell of row.cells) expect(cell, row.packages.join(', ')).not.toBe('');
    }
  });

  it('reads a removed row as a missing package', () => {
    const withoutRow = guide.replace(/^\| `yaml` .*\n/m, '');
    expect(withoutRow).not.toBe(guide);
    expect(listed(dependencyTable(withoutRow, 'Development'))).not.toContain('yaml');
    expect(listed(dependencyTable(withoutRow, 'Development'))).not.toEqual(
      Object.keys(packageJson.devDependencies).sort(),
    );
  });
});
