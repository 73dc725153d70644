/**
 * Puts a planned answer on the wire as the OpenAI Responses API: a `response` object, or an event stream
 * (`event: <type>` + `data:` frames, no `[DONE]`, as OpenAI sends it; `render-response.ts`). A scripted
 * stream error cuts the stream after its `after_chunks` item events (counted after `response.created` and
 * `response.in_progress`) with an `error` event; asked without streaming, it is a 500.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { answerWithPlan } from './answer-with-plan.js';
import type { ChatRequest } from './chat-request.js';
import type { MockModelState } from './mock-model-state.js';
import type { Plan } from './plan-reply.js';
import { renderResponseBody, renderResponseEvents, type ResponseEnvelope } from './render-response.js';

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
  const envelope = (sequence: string): ResponseEnvelope => ({
    id: `resp_mock${sequence}`,
    createdAt: Math.floor(Date.now() / 1000),
    model: state.model,
    promptCharacters: request.promptCharacters,
  });
  await answerWithPlan(state, request, plan, response, signal, {
    body: (planned, sequence) => renderResponseBody(planned.completion, envelope(sequence)),
    frames: (planned, sequence) => {
      const { contentEvents, closingEvents } = renderResponseEvents(planned.completion, envelope(sequence));
      let events: Record<string, unknown>[];
      if (planned.kind === 'stream_error') {
        const sent = contentEvents.slice(0, PREAMBLE_LENGTH + planned.afterChunks);
        const { message, code, type, param } = planned.error;
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
      return events.map((event) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`);
    },
  });
}
