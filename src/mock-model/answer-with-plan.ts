/**
 * The part of answering that does not depend on the wire: the planned delay, the sequence number and
 * request id, a scripted HTTP error, and a scripted stream error asked for without streaming (a 500).
 * The wire (`answer-chat.ts`, `answer-responses.ts`) renders the body or the stream frames.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatRequest } from './chat-request.js';
import { sendJson, sendScriptedError, writeSseFrames } from './http-replies.js';
import { nextSequence, type MockModelState } from './mock-model-state.js';
import type { Plan } from './plan-reply.js';

/** A plan that puts an answer on the wire (not a scripted HTTP error). */
export type AnswerPlan = Exclude<Plan, { kind: 'http_error' }>;

/** How one wire renders a planned answer. */
export interface WireRendering {
  /** The body of a complete answer, for the answer's sequence number. */
  body(plan: Extract<Plan, { kind: 'completion' }>, sequence: string): unknown;
  /** The SSE frames of a streamed answer (cut short with an error when the plan says so). */
  frames(plan: AnswerPlan, sequence: string): string[];
}

/** Answers one request with `plan`, rendered by `wire`. */
export async function answerWithPlan(
  state: MockModelState,
  request: ChatRequest,
  plan: Plan,
  response: ServerResponse,
  signal: AbortSignal,
  wire: WireRendering,
): Promise<void> {
  if (plan.delayMs > 0) await sleep(plan.delayMs, undefined, { signal });
  const sequence = nextSequence(state);
  const headers = { 'x-request-id': `req_mock${sequence}` };
  if (plan.kind === 'http_error') {
    sendScriptedError(response, plan.status, plan.body, { ...headers, ...plan.headers });
    return;
  }
  if (!request.stream) {
    if (plan.kind === 'stream_error') sendJson(response, 500, { error: plan.error }, headers);
    else sendJson(response, 200, wire.body(plan, sequence), headers);
    return;
  }
  await writeSseFrames(response, wire.frames(plan, sequence), plan.chunkDelayMs, headers, signal);
}
