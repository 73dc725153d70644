/**
 * `tpx-transport/server`: the local Messages-compatible proxy as a library. Kept apart from the main
 * entry so that a program using only the transport loads no HTTP server, logger or telemetry.
 *
 * @module
 */
export { startServer } from './start-server.js';
export type { RunningServer, ServeOptions } from './start-server.js';
