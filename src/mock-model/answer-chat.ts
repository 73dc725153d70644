/**
 * Puts a planned answer on the wire as Chat Completions: a `chat.completion` body, or `data:` chunks
 * ending in `data: [DONE]` (`render-completion.ts`). A scripted stream error cuts the stream after its
 * `after_chunks` content chunks with an `{error}` chunk; asked without streaming, it is a 500.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { answerWithPlan } from './answer-with-plan.js';
import type { ChatRequest } from './chat-request.js';
import type { MockModelState } from './mock-model-state.js';
import type { Plan } from './plan-reply.js';
import {
  renderCompletionBody,
  renderCompletionChunks,
  type CompletionEnvelope,
} from './render-completion.js';

/** Answers one chat completion request with `plan`. */
export async function answerChat(
  state: MockModelState,
  request: ChatRequest,
  plan: Plan,
  response: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const envelope = (sequence: string): CompletionEnvelope => ({
    id: `chatcmpl-mock${sequence}`,
    created: Math.floor(Date.now() / 1000),
    model: state.model,
    promptCharacters: request.promptCharacters,
  });
  await answerWithPlan(state, request, plan, response, signal, {
    body: (planned, sequence) => renderCompletionBody(planned.completion, envelope(sequence)),
    frames: (planned, sequence) => {
      const { contentChunks, closingChunks } = renderCompletionChunks(
        planned.completion,
        envelope(sequence),
        request.includeUsage,
      );
      const chunks =
        planned.kind === 'stream_error'
          ? [...contentChunks.slice(0, planned.afterChunks), { error: planned.error }]
          : [...contentChunks, ...closingChunks];
      return [...chunks.map((chunk) => JSON.stringify(chunk)), '[DONE]'].map((line) => `data: ${line}\n\n`);
    },
  });
}
