/**
 * Puts a planned answer on the wire as the OpenAI Responses API: a `response` object, or an event stream
 * (`event: <type>` + `data:` frames, no `[DONE]`, as OpenAI sends it; `render-response.ts`). A scripted
 * stream error cuts the stream after its `after_chunks` item events (counted after `response.created` and
 * `response.in_progress`) with an `error` event; asked without streaming, it is a 500.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatRequest } from './chat-request.js';
import { sendJson, sendScriptedError, writeSseFrames } from './http-replies.js';
import { nextSequence, type MockModelState } from './mock-model-state.js';
import type { Plan } from './plan-reply.js';
import { renderResponseBody, renderResponseEvents } from './render-response.js';

/** Events every stream opens with before the first item. */
const PREAMBLE_LENGTH = 2;

/** Answers one Responses request with `plan`. */
export async function answerResponses(
  state: MockModelState,
  request: ChatRequest,
  plan: Plan,
  response: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  if (plan.delayMs > 0) await sleep(plan.delayMs, undefined, { signal });
  const sequence = nextSequence(state);
  const requestId = `req_mock${sequence}`;
  if (plan.kind === 'http_error') {
    sendScriptedError(response, plan.status, plan.body, { 'x-request-id': requestId, ...plan.headers });
    return;
  }
  const envelope = {
    id: `resp_mock${sequence}`,
    createdAt: Math.floor(Date.now() / 1000),
    model: state.model,
    promptCharacters: request.promptCharacters,
  };
  if (!request.stream) {
    if (plan.kind === 'stream_error') {
      sendJson(response, 500, { error: plan.error }, { 'x-request-id': requestId });
    } else {
      sendJson(response, 200, renderResponseBody(plan.completion, envelope), { 'x-request-id': requestId });
    }
    return;
  }
  const { contentEvents, closingEvents } = renderResponseEvents(plan.completion, envelope);
  let events: Record<string, unknown>[];
  if (plan.kind === 'stream_error') {
    const sent = contentEvents.slice(0, PREAMBLE_LENGTH + plan.afterChunks);
    const { message, code, type, param } = plan.error;
    events = [
      ...sent,
      {
        type: 'error',
        code: code ?? type ?? null,
        message: message ?? 'The mock model was scripted to fail in the middle of this stream.',
        param: param ?? null,
        sequence_number: sent.length,
      },
    ];
  } else {
    events = [...contentEvents, ...closingEvents];
  }
  await writeSseFrames(
    response,
    events.map((event) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`),
    plan.chunkDelayMs,
    { 'x-request-id': requestId },
    signal,
  );
}
