import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { format } from 'prettier';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MutationReport } from './score-directories.js';
import {
  SCORES_FILE,
  formatScoresFile,
  parseScoresFile,
  readScoresFile,
  updateScores,
  writeScoresFile,
  type ReportOrigin,
  type ScoresFile,
} from './scores-file.js';

const ROOT = new URL('../../', import.meta.url);

function report(files: Record<string, string[]>): MutationReport {
  return {
    files: Object.fromEntries(
      Object.entries(files).map(([path, statuses]) => [
        path,
        { mutants: statuses.map((status) => ({ status })) },
      ]),
    ),
  };
}

function origin(path: string, writtenAt: string, files: Record<string, string[]>): ReportOrigin {
  return { path, writtenAt: new Date(writtenAt), report: report(files) };
}

const SEEDED: ScoresFile = {
  description: 'kept as it was',
  directories: [
    {
      name: 'src/server',
      score: 94.76,
      killed: 2337,
      timedOut: 13,
      survived: 121,
      noCoverage: 9,
      notCounted: null,
      files: 24,
      measuredAt: '2026-12-01/2026-12-02',
      source: 'docs/testing.md',
    },
    {
      name: 'src/translate',
      score: 92.3,
      killed: 5706,
      timedOut: 10,
      survived: 430,
      noCoverage: 47,
      notCounted: null,
      files: 51,
      measuredAt: '2026-12-01/2026-12-02',
      source: 'docs/testing.md',
    },
  ],
};

describe('updateScores', () => {
  it('replaces the directories the reports cover and keeps the others as they were', () => {
    const updated = updateScores(SEEDED, [
      origin('reports/mutation/translate-a.json', '2026-12-04T10:00:00Z', {
        'src/translate/a.ts': ['Killed', 'Killed', 'Survived', 'CompileError'],
      }),
      origin('reports/mutation/translate-b.json', '2026-12-04T12:30:00Z', {
        'src/translate/b.ts': ['Timeout', 'NoCoverage'],
      }),
    ]);
    expect(updated).toEqual({
      description: 'kept as it was',
      directories: [
        SEEDED.directories[0],
        {
          name: 'src/translate',
          score: 60,
          killed: 2,
          timedOut: 1,
          survived: 1,
          noCoverage: 1,
          notCounted: 1,
          files: 2,
          measuredAt: '2026-12-04T12:30:00.000Z',
          source:
            'npm run mutation:scores over reports/mutation/translate-a.json, reports/mutation/translate-b.json',
        },
      ],
    });
  });

  it('dates and sources a directory by the reports its files count from, not by a report it lost every file to', () => {
    const updated = updateScores(undefined, [
      origin('old.json', '2026-12-01T00:00:00Z', {
        'src/transport/a.ts': ['Survived'],
        'src/providers/p.ts': ['Killed', 'Survived', 'Survived'],
      }),
      origin('new.json', '2026-12-03T00:00:00Z', { 'src/transport/a.ts': ['Killed'] }),
    ]);
    expect(
      updated.directories.map(({ name, score, measuredAt, source }) => ({ name, score, measuredAt, source })),
    ).toEqual([
      {
        name: 'src/providers',
        score: 33.33,
        measuredAt: '2026-12-01T00:00:00.000Z',
        source: 'npm run mutation:scores over old.json',
      },
      {
        name: 'src/transport',
        score: 100,
        measuredAt: '2026-12-03T00:00:00.000Z',
        source: 'npm run mutation:scores over new.json',
      },
    ]);
    expect(updated.description).toMatch(/npm run mutation:scores/);
  });

  it('records no score, rather than 0% or 100%, for a directory without counted mutants', () => {
    const updated = updateScores(undefined, [
      origin('a.json', '2026-12-04T00:00:00Z', { 'src/types.ts': ['Ignored'] }),
    ]);
    expect(updated.directories[0]).toMatchObject({ name: 'src', score: null, notCounted: 1 });
  });
});

describe('parseScoresFile', () => {
  it('reads what formatScoresFile writes', () => {
    expect(parseScoresFile(formatScoresFile(SEEDED), 'scores.json')).toEqual(SEEDED);
  });

  it('refuses an entry with a missing or negative count, naming the file, the entry and the fields', () => {
    const broken = { ...SEEDED, directories: [{ ...SEEDED.directories[0], killed: -1, source: undefined }] };
    expect(() => parseScoresFile(JSON.stringify(broken), 'docs/mutation-scores.json')).toThrow(
      'docs/mutation-scores.json: directories[0] has no valid killed, source',
    );
  });

  it('refuses text that is not JSON or has no list of directories', () => {
    expect(() => parseScoresFile('{"directories":', 'a.json')).toThrow(/^a\.json is not JSON: /);
    expect(() => parseScoresFile('{"scores":[]}', 'a.json')).toThrow('a.json has no "directories" list');
  });
});

describe('writeScoresFile', () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'tpx-mutation-scores-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('creates the file, then updates only the directories a later run covers', () => {
    const path = join(directory, 'scores.json');
    writeScoresFile(path, [
      origin('a.json', '2026-12-04T00:00:00Z', {
        'src/server/a.ts': ['Killed'],
        'src/transport/t.ts': ['Survived'],
      }),
    ]);
    writeScoresFile(path, [origin('b.json', '2026-12-05T00:00:00Z', { 'src/transport/t.ts': ['Killed'] })]);
    const written = readScoresFile(path);
    expect(written?.directories.map((row) => [row.name, row.score, row.source])).toEqual([
      ['src/server', 100, 'npm run mutation:scores over a.json'],
      ['src/transport', 100, 'npm run mutation:scores over b.json'],
    ]);
  });

  it('writes what Prettier leaves unchanged, so the repository check stays green', async () => {
    const path = join(directory, 'scores.json');
    writeScoresFile(path, [
      origin('a.json', '2026-12-04T00:00:00Z', { 'src/server/a.ts': ['Killed', 'Survived'] }),
    ]);
    const text = readFileSync(path, 'utf8');
    expect(await format(text, { parser: 'json' })).toBe(text);
  });

  it('is what `npm run mutation:scores` does with the reports it is given', { timeout: 60_000 }, async () => {
    const reportPath = join(directory, 'server.json');
    writeFileSync(
      reportPath,
      JSON.stringify(report({ 'src/server/a.ts': ['Killed', 'Killed', 'Survived'] })),
    );
    utimesSync(reportPath, new Date('2026-12-04T08:00:00Z'), new Date('2026-12-04T08:00:00Z'));
    const out = join(directory, 'scores.json');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'test/mutation/print-scores.ts', '--out', out, reportPath],
      { cwd: ROOT },
    );
    expect(stdout).toContain(`wrote the scores of src/server to ${out}`);
    expect(readScoresFile(out)?.directories).toEqual([
      {
        name: 'src/server',
        score: 66.67,
        killed: 2,
        timedOut: 0,
        survived: 1,
        noCoverage: 0,
        notCounted: 0,
        files: 1,
        measuredAt: '2026-12-04T08:00:00.000Z',
        source: `npm run mutation:scores over ${reportPath}`,
      },
    ]);
  });
});

describe('docs/mutation-scores.json', () => {
  const scores = readScoresFile(new URL(SCORES_FILE, ROOT).pathname);

  it('holds a score for each mutated directory, with when and where it was measured', () => {
    expect(scores?.directories.map((row) => row.name)).toEqual([
      'src/providers',
      'src/server',
      'src/translate',
      'src/transport',
    ]);
  });

  it('is summarised in docs/testing.md, row for row', () => {
    const testing = readFileSync(new URL('docs/testing.md', ROOT), 'utf8');
    for (const row of scores?.directories ?? []) {
      const line = testing.split('\n').find((text) => text.startsWith(`| \`${row.name}\``));
      expect(line, row.name).toBeDefined();
      const cells = line!
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim());
      expect(cells.slice(1, 6), row.name).toEqual([
        row.score === null ? '-' : `${row.score.toFixed(2)}%`,
        String(row.killed),
        String(row.timedOut),
        String(row.survived),
        String(row.noCoverage),
      ]);
    }
  });
});
