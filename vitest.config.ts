import { defineConfig } from 'vitest/config';
import { findLlamaServer, llamaServerHint } from './test/real-server/llama-server.js';

// The real-server tests need a llama.cpp `llama-server` binary. Without one they are not collected
// (rather than collected and skipped), and one line says how to provide it. CI sets
// TPX_REQUIRE_LLAMA_SERVER=1 so a missing binary fails the run instead of passing quietly.
const hasLlamaServer = findLlamaServer() !== undefined;
if (!hasLlamaServer) {
  if (process.env['TPX_REQUIRE_LLAMA_SERVER'] === '1') throw new Error(llamaServerHint);
  console.warn(llamaServerHint);
}

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...(hasLlamaServer ? [] : ['test/real-server/**'])],
    // Property tests: a time limit, a fresh seed per run, and how to replay a failure.
    setupFiles: ['test/helpers/property-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});
