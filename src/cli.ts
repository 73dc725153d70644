#!/usr/bin/env node
/**
 * The `tpx` binary.
 *
 * @module
 */
import { runCli } from './cli/commands.js';
import { processIo } from './cli/output.js';

process.exitCode = await runCli(process.argv.slice(2), processIo());
