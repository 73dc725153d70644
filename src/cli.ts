#!/usr/bin/env node
/**
 * The `tpx` binary.
 *
 * @module
 */
import { runCli } from './cli/commands.js';
import { processIo } from './cli/output.js';

process.exitCode = await runCli(process.argv.slice(2), processIo());
// A `tpx serve --workers` worker has a channel to its primary, which would keep it alive once done.
if (process.connected) process.disconnect();
