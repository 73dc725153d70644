/**
 * `tpx-transport/mock-model`: the scripted OpenAI-compatible model server (`tpx mock-model`) for tests
 * and demonstrations. It has its own entry so that a program using the transport or the proxy loads
 * none of it.
 *
 * @example
 * import { startMockModel } from 'tpx-transport/mock-model';
 * const server = await startMockModel({ script: { replies: [{ text: 'Hello.' }] } });
 *
 * @module
 */
export { startMockModel, parseMockScript } from './mock-model.js';
export type { MockModelOptions, MockModelServer, MockScript, RecordedRequest } from './mock-model.js';
export { loadReplayJournal } from './replay.js';
export type { ReplayJournal, Recording } from './replay.js';
