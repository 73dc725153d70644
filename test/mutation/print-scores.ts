/**
 * Prints mutation scores per directory (and, with `--files`, per file) from Stryker's reports:
 * `npm run mutation:scores [-- [--files] [report.json …]]`. Without report paths it reads every
 * `reports/mutation/*.json`, oldest first, so the newest run of a file counts.
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { formatScores, parseMutationReport, scoreDirectories } from './score-directories.js';

const argumentsGiven = process.argv.slice(2);
const showFiles = argumentsGiven.includes('--files');
let paths = argumentsGiven.filter((argument) => argument !== '--files');
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
let reports;
try {
  reports = paths.map((path) => parseMutationReport(readFileSync(path, 'utf8'), path));
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const { directories, files } = scoreDirectories(reports);
console.log(formatScores(directories));
if (showFiles) console.log(`\n${formatScores(files)}`);
