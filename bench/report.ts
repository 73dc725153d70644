/**
 * Prints the tables of `bench/results.json` (or the file given) as Markdown, ready to paste into
 * `docs/performance.md`: `npx tsx bench/report.ts [results.json]`.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderMarkdown, type Table } from './harness/table.js';

const path = process.argv[2] ?? fileURLToPath(new URL('results.json', import.meta.url));
const results = JSON.parse(readFileSync(path, 'utf8')) as {
  generatedAt: string;
  environment: {
    node: string;
    platform: string;
    cpus: number;
    cpuModel: string;
    loadAverageAtStart: number[];
  };
  seconds: Record<string, number>;
  tables: Table[];
};
const { environment } = results;
process.stdout.write(
  `Measured ${results.generatedAt} on ${environment.cpus} × ${environment.cpuModel}, ${environment.platform}, ` +
    `Node ${environment.node}; load average at start ${environment.loadAverageAtStart.join(' ')}; ` +
    `the run took ${results.seconds['total']} s.\n\n`,
);
process.stdout.write(results.tables.map(renderMarkdown).join('\n'));
