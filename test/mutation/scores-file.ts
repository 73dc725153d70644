/**
 * The mutation scores kept in the repository, `docs/mutation-scores.json`: one entry per source
 * directory with its counts, its score, when it was measured and where the figures come from. Stryker's
 * reports stay out of the repository (they are large and machine-specific); `npm run mutation:scores`
 * sums them per directory and updates this file, replacing the entries of the directories the reports
 * cover and keeping the others, since a directory is usually measured on its own.
 *
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { directoryOf, scoreDirectories, type MutationReport, type ScoreRow } from './score-directories.js';

/** Where `npm run mutation:scores` writes, relative to the repository root. */
export const SCORES_FILE = 'docs/mutation-scores.json';

/** One directory's scores as the file keeps them. */
export interface DirectoryScore {
  /** The directory, as `directoryOf` names it (`src/translate`). */
  readonly name: string;
  /** (killed + timed out) / (killed + timed out + survived + no coverage), in percent, two decimals; null when no mutant counted. */
  readonly score: number | null;
  readonly killed: number;
  readonly timedOut: number;
  readonly survived: number;
  readonly noCoverage: number;
  /** Mutants left out of the score (compile and runtime errors, ignored, pending); null when not known. */
  readonly notCounted: number | null;
  /** How many of the directory's files the figures cover. */
  readonly files: number;
  /** When the newest report behind the figures was written (ISO 8601; a date interval for older figures). */
  readonly measuredAt: string;
  /** Where the figures come from: the reports summed, or the document they were taken from. */
  readonly source: string;
}

/** The whole file. */
export interface ScoresFile {
  readonly description: string;
  readonly directories: readonly DirectoryScore[];
}

const DESCRIPTION =
  'Mutation scores per source directory (Stryker, see docs/testing.md). Written by `npm run mutation:scores` ' +
  'from the reports in reports/mutation/, which are not committed; a run replaces the directories its ' +
  'reports cover and keeps the others.';

/** A report as read from disk: its path and when it was written, for `measuredAt` and `source`. */
export interface ReportOrigin {
  readonly path: string;
  readonly writtenAt: Date;
  readonly report: MutationReport;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/**
 * Reads the scores file from its JSON text, refusing (naming `source` and the entry) anything that is not
 * such a file, so that a hand edit gone wrong is reported rather than overwritten.
 */
export function parseScoresFile(text: string, source: string): ScoresFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${source} is not JSON: ${(error as Error).message}`);
  }
  const directories =
    typeof value === 'object' && value !== null
      ? (value as { directories?: unknown }).directories
      : undefined;
  if (!Array.isArray(directories)) throw new Error(`${source} has no "directories" list`);
  directories.forEach((entry: unknown, index) => {
    const row = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const problems = [
      typeof row['name'] === 'string' && row['name'] !== '' ? '' : 'name',
      row['score'] === null || (typeof row['score'] === 'number' && row['score'] >= 0 && row['score'] <= 100)
        ? ''
        : 'score',
      ...(['killed', 'timedOut', 'survived', 'noCoverage', 'files'] as const).map((key) =>
        isCount(row[key]) ? '' : key,
      ),
      row['notCounted'] === null || isCount(row['notCounted']) ? '' : 'notCounted',
      typeof row['measuredAt'] === 'string' && row['measuredAt'] !== '' ? '' : 'measuredAt',
      typeof row['source'] === 'string' && row['source'] !== '' ? '' : 'source',
    ].filter((problem) => problem !== '');
    if (problems.length > 0) {
      throw new Error(`${source}: directories[${index}] has no valid ${problems.join(', ')}`);
    }
  });
  return value as ScoresFile;
}

function roundedScore(row: ScoreRow): number | null {
  return Number.isNaN(row.score) ? null : Math.round(row.score * 100) / 100;
}

/**
 * The file after a run: the directories the reports cover, scored from them (each file from the newest
 * report that holds it, as `scoreDirectories` does), replace their old entries; the other entries stay.
 * `reports` are ordered oldest first. A directory's `measuredAt` is when the newest report it takes a
 * file from was written, and its `source` names those reports.
 */
export function updateScores(existing: ScoresFile | undefined, reports: readonly ReportOrigin[]): ScoresFile {
  const { directories, files } = scoreDirectories(reports.map((origin) => origin.report));
  const fromReport = new Map<string, ReportOrigin>();
  for (const origin of reports) {
    for (const path of Object.keys(origin.report.files)) fromReport.set(path, origin);
  }
  const measured = directories.map((row): DirectoryScore => {
    const origins = new Set<ReportOrigin>();
    for (const file of files) {
      if (directoryOf(file.name) === row.name) origins.add(fromReport.get(file.name)!);
    }
    const newest = Math.max(...[...origins].map((origin) => origin.writtenAt.getTime()));
    const names = [...origins].map((origin) => origin.path.replaceAll('\\', '/')).sort();
    return {
      name: row.name,
      score: roundedScore(row),
      killed: row.killed,
      timedOut: row.timedOut,
      survived: row.survived,
      noCoverage: row.noCoverage,
      notCounted: row.notCounted,
      files: files.filter((file) => directoryOf(file.name) === row.name).length,
      measuredAt: new Date(newest).toISOString(),
      source: `npm run mutation:scores over ${names.join(', ')}`,
    };
  });
  const replaced = new Set(measured.map((row) => row.name));
  const kept = (existing?.directories ?? []).filter((row) => !replaced.has(row.name));
  return {
    description: existing?.description ?? DESCRIPTION,
    directories: [...kept, ...measured].sort((left, right) => left.name.localeCompare(right.name)),
  };
}

/** The file's text: two-space JSON and a final newline, as Prettier leaves it. */
export function formatScoresFile(file: ScoresFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** Reads the file at `path`, or `undefined` when there is none yet. */
export function readScoresFile(path: string): ScoresFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return parseScoresFile(text, path);
}

/** Updates the file at `path` with `reports` (see `updateScores`) and returns what it wrote. */
export function writeScoresFile(path: string, reports: readonly ReportOrigin[]): ScoresFile {
  const updated = updateScores(readScoresFile(path), reports);
  writeFileSync(path, formatScoresFile(updated));
  return updated;
}
