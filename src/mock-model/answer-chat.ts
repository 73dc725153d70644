/**
 * Puts a planned answer on the wire as Chat Completions: a `chat.completion` body, or `data:` chunks
 * ending in `data: [DONE]` (`render-completion.ts`). A scripted stream error cuts the stream after its
 * `after_chunks` content chunks with an `{error}` chunk; asked without streaming, it is a 500.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatRequest } from './chat-request.js';
import { sendJson, sendScriptedError, writeSseFrames } from './http-replies.js';
import { nextSequence, type MockModelState } from './mock-model-state.js';
import type { Plan } from './plan-reply.js';
import { renderCompletionBody, renderCompletionChunks } from './render-completion.js';

/** Answers one chat completion request with `plan`. */
export async function answerChat(
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
    id: `chatcmpl-mock${sequence}`,
    created: Math.floor(Date.now() / 1000),
    model: state.model,
    promptCharacters: request.promptCharacters,
  };
  if (!request.stream) {
    if (plan.kind === 'stream_error') {
      sendJson(response, 500, { error: plan.error }, { 'x-request-id': requestId });
    } else {
      sendJson(response, 200, renderCompletionBody(plan.completion, envelope), { 'x-request-id': requestId });
    }
    return;
  }
  const { contentChunks, closingChunks } = renderCompletionChunks(
    plan.completion,
    envelope,
    request.includeUsage,
  );
  const chunks =
    plan.kind === 'stream_error'
      ? [...contentChunks.slice(0, plan.afterChunks), { error: plan.error }]
      : [...contentChunks, ...closingChunks];
  const lines = [...chunks.map((chunk) => JSON.stringify(chunk)), '[DONE]'];
  await writeSseFrames(
    response,
    lines.map((line) => `data: ${line}\n\n`),
    plan.chunkDelayMs,
    { 'x-request-id': requestId },
    signal,
  );
}
