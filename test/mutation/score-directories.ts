/**
 * Mutation scores per source directory, summed over several Stryker reports.
 *
 * Mutation runs here are split into file groups (one `--incrementalFile` each) because a single run over
 * every directory takes hours on a small machine. Each report follows the mutation-testing-report
 * schema; this module reads them, takes every file's mutants from the newest report that holds the
 * file, and adds them up per directory.
 *
 * @module
 */

/** A mutant's status, as the mutation-testing-report schema names it. */
export type MutantStatus =
  'Killed' | 'Survived' | 'NoCoverage' | 'Timeout' | 'CompileError' | 'RuntimeError' | 'Ignored' | 'Pending';

/** The part of a mutation-testing report this module reads. */
export interface MutationReport {
  readonly files: Readonly<Record<string, { readonly mutants: readonly { readonly status: string }[] }>>;
}

/**
 * Reads one report from its JSON text. Refuses, naming `source`, text that is not JSON or a JSON value
 * that is not a mutation report — a Stryker configuration file saved beside the reports, for one — so a
 * stray file in a reports folder is reported instead of crashing the sum.
 */
export function parseMutationReport(text: string, source: string): MutationReport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${source} is not JSON: ${(error as Error).message}`);
  }
  const files =
    typeof value === 'object' && value !== null ? (value as { files?: unknown }).files : undefined;
  if (typeof files !== 'object' || files === null || Array.isArray(files)) {
    throw new Error(`${source} is not a mutation report: it has no "files" object`);
  }
  for (const [path, file] of Object.entries(files)) {
    const mutants =
      typeof file === 'object' && file !== null ? (file as { mutants?: unknown }).mutants : undefined;
    if (
      !Array.isArray(mutants) ||
      !mutants.every((mutant) => typeof (mutant as { status?: unknown })?.status === 'string')
    ) {
      throw new Error(
        `${source} is not a mutation report: "files" entry ${path} has no list of mutants with a status`,
      );
    }
  }
  return value as MutationReport;
}

/** Mutant counts of one directory or file, and its score. */
export interface ScoreRow {
  readonly name: string;
  readonly killed: number;
  readonly timedOut: number;
  readonly survived: number;
  readonly noCoverage: number;
  /** Mutants that do not count: compile and runtime errors, ignored and still pending ones. */
  readonly notCounted: number;
  /** (killed + timed out) / (killed + timed out + survived + no coverage), in percent; NaN when none. */
  readonly score: number;
}

interface Counts {
  killed: number;
  timedOut: number;
  survived: number;
  noCoverage: number;
  notCounted: number;
}

function emptyCounts(): Counts {
  return { killed: 0, timedOut: 0, survived: 0, noCoverage: 0, notCounted: 0 };
}

function add(counts: Counts, status: string): void {
  if (status === 'Killed') counts.killed += 1;
  else if (status === 'Timeout') counts.timedOut += 1;
  else if (status === 'Survived') counts.survived += 1;
  else if (status === 'NoCoverage') counts.noCoverage += 1;
  else counts.notCounted += 1;
}

function toRow(name: string, counts: Counts): ScoreRow {
  const detected = counts.killed + counts.timedOut;
  const valid = detected + counts.survived + counts.noCoverage;
  return { name, ...counts, score: valid === 0 ? Number.NaN : (100 * detected) / valid };
}

/** The directory a report's file path belongs to: its first two segments (`src/translate`). */
export function directoryOf(path: string): string {
  const segments = path.replaceAll('\\', '/').split('/');
  return segments.length > 2 ? segments.slice(0, 2).join('/') : segments.slice(0, -1).join('/') || '.';
}

/**
 * Scores per directory and per file. `reports` are ordered oldest first: a file found in several takes
 * its mutants from the last one, so a newer run of a file replaces an older one instead of adding to it.
 */
export function scoreDirectories(reports: readonly MutationReport[]): {
  readonly directories: readonly ScoreRow[];
  readonly files: readonly ScoreRow[];
} {
  const newest = new Map<string, readonly { readonly status: string }[]>();
  for (const report of reports) {
    for (const [path, file] of Object.entries(report.files)) newest.set(path, file.mutants);
  }
  const byDirectory = new Map<string, Counts>();
  const files: ScoreRow[] = [];
  for (const path of [...newest.keys()].sort()) {
    const fileCounts = emptyCounts();
    const directory = directoryOf(path);
    const directoryCounts = byDirectory.get(directory) ?? emptyCounts();
    byDirectory.set(directory, directoryCounts);
    for (const mutant of newest.get(path) ?? []) {
      add(fileCounts, mutant.status);
      add(directoryCounts, mutant.status);
    }
    files.push(toRow(path, fileCounts));
  }
  const directories = [...byDirectory.keys()]
    .sort()
    .map((name) => toRow(name, byDirectory.get(name) ?? emptyCounts()));
  return { directories, files };
}

/** The rows as a plain-text table. */
export function formatScores(rows: readonly ScoreRow[]): string {
  const header = ['', 'score', 'killed', 'timed out', 'survived', 'no cov', 'not counted'];
  const lines = rows.map((row) => [
    row.name,
    Number.isNaN(row.score) ? '-' : `${row.score.toFixed(2)}%`,
    String(row.killed),
    String(row.timedOut),
    String(row.survived),
    String(row.noCoverage),
    String(row.notCounted),
  ]);
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...lines.map((line) => line[column]?.length ?? 0)),
  );
  return [header, ...lines]
    .map((line) =>
      line
        .map((cell, column) =>
          column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0),
        )
        .join('  '),
    )
    .join('\n');
}
