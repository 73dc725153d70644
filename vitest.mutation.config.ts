import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The tests a mutation run uses (see docs/testing.md). TPX_MUTATION_TESTS narrows them to a
// comma-separated list of globs, e.g. the unit tests beside the directory being mutated; by default,
// every test except the real-server suite and the fault suite's load test, which take minutes and
// exercise nothing the other tests do not.
const selected = (process.env['TPX_MUTATION_TESTS'] ?? '')
  .split(',')
  .map((glob) => glob.trim())
  .filter((glob) => glob !== '');

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    ...(selected.length > 0 ? { include: selected } : {}),
    exclude: ['**/node_modules/**', 'test/real-server/**', 'test/faults/load.test.ts'],
  },
});
