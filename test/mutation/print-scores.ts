/**
 * Prints mutation scores per directory (and, with `--files`, per file) from Stryker's reports, and records
 * the per-directory scores in `docs/mutation-scores.json`:
 * `npm run mutation:scores [-- [--files] [--no-write] [--out file.json] [report.json …]]`. Without report
 * paths it reads every `reports/mutation/*.json`, oldest first, so the newest run of a file counts. The
 * directories the reports cover replace their entries in the scores file; the others are kept.
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { formatScores, parseMutationReport, scoreDirectories } from './score-directories.js';
import { SCORES_FILE, writeScoresFile, type ReportOrigin } from './scores-file.js';

const argumentsGiven = process.argv.slice(2);
const showFiles = argumentsGiven.includes('--files');
const noWrite = argumentsGiven.includes('--no-write');
const outIndex = argumentsGiven.indexOf('--out');
const outPath = outIndex === -1 ? SCORES_FILE : argumentsGiven[outIndex + 1];
if (outPath === undefined || outPath.startsWith('--')) {
  console.error('--out needs a file name');
  process.exit(2);
}
let paths = argumentsGiven.filter(
  (argument, index) =>
    !['--files', '--no-write', '--out'].includes(argument) && (outIndex === -1 || index !== outIndex + 1),
);
if (paths.length === 0) {
  const folder = join('reports', 'mutation');
  let names: string[] = [];
  try {
    names = readdirSync(folder).filter((name) => name.endsWith('.json'));
  } catch {
    names = [];
  }
  paths = names.map((name) => join(folder, name));
}
if (paths.length === 0) {
  console.error('no mutation reports found: run `npm run mutation` first, or name the report files');
  process.exit(1);
}
paths.sort((left, right) => statSync(left).mtimeMs - statSync(right).mtimeMs);
let origins: ReportOrigin[];
try {
  origins = paths.map((path) => ({
    path,
    writtenAt: statSync(path).mtime,
    report: parseMutationReport(readFileSync(path, 'utf8'), path),
  }));
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const { directories, files } = scoreDirectories(origins.map((origin) => origin.report));
console.log(formatScores(directories));
if (showFiles) console.log(`\n${formatScores(files)}`);
if (!noWrite) {
  try {
    writeScoresFile(outPath, origins);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  console.log(`\nwrote the scores of ${directories.map((row) => row.name).join(', ')} to ${outPath}`);
}
