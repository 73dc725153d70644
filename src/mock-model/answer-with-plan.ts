/**
 * The part of answering that does not depend on the wire: the planned delay, the sequence number, the
 * request id and the creation time, a scripted HTTP error, and a scripted stream error asked for without
 * streaming (a 500). The wire (`chatRendering`, `responsesRendering`) renders the body or the stream
 * frames.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Completion } from './completion.js';
import { sendJson, sendScriptedError, writeSseFrames } from './http-replies.js';
import { nextSequence, type MockModelState } from './mock-model-state.js';
import type { MockRequest } from './mock-request.js';
import type { Plan } from './plan-reply.js';

/** A plan that puts an answer on the wire (not a scripted HTTP error). */
export type AnswerPlan = Exclude<Plan, { kind: 'http_error' }>;

/** What every part of one answer shares, on either wire. */
export interface AnswerEnvelope {
  /** The answer's sequence number (`000001`), which numbers its ids. */
  sequence: string;
  /** Seconds since the epoch. */
  created: number;
  model: string;
  /** Characters of the request that count towards the input tokens. */
  promptCharacters: number;
}

/** How one wire renders a planned answer. */
export interface WireRendering {
  /** The body of a complete answer. */
  body(completion: Completion, envelope: AnswerEnvelope): unknown;
  /** The SSE frames of a streamed answer (cut short with an error when the plan says so). */
  frames(plan: AnswerPlan, envelope: AnswerEnvelope, request: MockRequest): string[];
}

/** Answers one request with `plan`, rendered by `wire`. */
export async function answerWithPlan(
  state: MockModelState,
  request: MockRequest,
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
  const envelope: AnswerEnvelope = {
    sequence,
    created: Math.floor(Date.now() / 1000),
    model: state.model,
    promptCharacters: request.promptCharacters,
  };
  if (!request.stream) {
    if (plan.kind === 'stream_error') sendJson(response, 500, { error: plan.error }, headers);
    else sendJson(response, 200, wire.body(plan.completion, envelope), headers);
    return;
  }
  const frames = wire.frames(plan, envelope, request);
  await writeSseFrames(response, frames, plan.chunkDelayMs, headers, signal);
}
