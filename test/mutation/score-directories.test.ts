import { describe, expect, it } from 'vitest';
import {
  directoryOf,
  formatScores,
  parseMutationReport,
  scoreDirectories,
  type MutationReport,
} from './score-directories.js';

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

describe('scoreDirectories', () => {
  it('counts timed-out mutants as detected and no-coverage ones as not, leaving errors out of the score', () => {
    const { directories } = scoreDirectories([
      report({
        'src/translate/a.ts': [
          'Killed',
          'Killed',
          'Timeout',
          'Survived',
          'NoCoverage',
          'CompileError',
          'Ignored',
        ],
      }),
    ]);
    expect(directories).toStrictEqual([
      { name: 'src/translate', killed: 2, timedOut: 1, survived: 1, noCoverage: 1, notCounted: 2, score: 60 },
    ]);
  });

  it('adds the files of one directory together across reports', () => {
    const { directories } = scoreDirectories([
      report({ 'src/server/a.ts': ['Killed', 'Survived'] }),
      report({ 'src/server/b.ts': ['Killed', 'Killed'], 'src/providers/c.ts': ['Survived'] }),
    ]);
    expect(directories.map((row) => [row.name, row.score])).toStrictEqual([
      ['src/providers', 0],
      ['src/server', 75],
    ]);
  });

  it('takes a file found in several reports from the last one only', () => {
    const { files, directories } = scoreDirectories([
      report({ 'src/transport/a.ts': ['Survived', 'Survived'] }),
      report({ 'src/transport/a.ts': ['Killed', 'Survived'] }),
    ]);
    expect(files).toStrictEqual([
      {
        name: 'src/transport/a.ts',
        killed: 1,
        timedOut: 0,
        survived: 1,
        noCoverage: 0,
        notCounted: 0,
        score: 50,
      },
    ]);
    expect(directories[0]?.survived).toBe(1);
  });

  it('gives a file without counted mutants no score rather than 0% or 100%', () => {
    const { files } = scoreDirectories([report({ 'src/server/types.ts': ['Ignored'] })]);
    expect(files[0]?.score).toBeNaN();
    expect(formatScores(files)).toContain('src/server/types.ts');
    expect(formatScores(files).split('\n')[1]).toMatch(/types\.ts\s+-\s+0\s+0\s+0\s+0\s+1$/);
  });
});

describe('directoryOf', () => {
  it('groups nested files under their top two segments', () => {
    expect(directoryOf('src/translate/deep/file.ts')).toBe('src/translate');
    expect(directoryOf('src/errors.ts')).toBe('src');
    expect(directoryOf('file.ts')).toBe('.');
  });
});

describe('parseMutationReport', () => {
  it('reads a report whose files each hold a list of mutants with a status', () => {
    const text = JSON.stringify({
      schemaVersion: '2',
      files: { 'src/a.ts': { mutants: [{ status: 'Killed' }] } },
    });
    expect(parseMutationReport(text, 'a.json')).toStrictEqual({
      schemaVersion: '2',
      files: { 'src/a.ts': { mutants: [{ status: 'Killed' }] } },
    });
  });

  it('refuses a Stryker configuration saved beside the reports, naming the file', () => {
    const text = JSON.stringify({ testRunner: 'vitest', mutate: ['src/a.ts'] });
    expect(() => parseMutationReport(text, 'reports/mutation/stryker-a.json')).toThrow(
      'reports/mutation/stryker-a.json is not a mutation report: it has no "files" object',
    );
  });

  it('refuses a files entry without a list of mutants with a status', () => {
    expect(() => parseMutationReport('{"files":{"src/a.ts":{"mutants":[{}]}}}', 'b.json')).toThrow(
      'b.json is not a mutation report: "files" entry src/a.ts has no list of mutants with a status',
    );
    expect(() => parseMutationReport('{"files":{"src/a.ts":{}}}', 'b.json')).toThrow(/entry src\/a\.ts/);
  });

  it('refuses text that is not JSON, naming the file', () => {
    expect(() => parseMutationReport('{"files":', 'c.json')).toThrow(/^c\.json is not JSON: /);
  });
});
