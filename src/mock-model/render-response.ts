/**
 * Renders one planned answer of the mock model the way the OpenAI Responses API sends it: as a
 * `response` object, or as the events of a stream.
 *
 * Output items, in order: a `reasoning` item (its text as one summary part) when the answer has
 * reasoning, a `message` item with one `output_text` part when it has text, one `function_call` item
 * (with `call_id`) per tool call. A stream is `response.created`, `response.in_progress`, then per item
 * `response.output_item.added`, its parts and deltas (reasoning and text split into word-sized deltas,
 * arguments into fragments), their `….done` events and `response.output_item.done`, and finally
 * `response.completed` — or `response.incomplete` with `incomplete_details.reason` `max_output_tokens`
 * for a `length` finish (`content_filter` for `content_filter`) — carrying the whole response. Every
 * event has a `sequence_number`; item events carry `output_index` and `item_id`. Each event is sent as
 * `event: <type>` + `data:`, with no `[DONE]`, as OpenAI sends it (`responsesRendering`). A scripted
 * stream error cuts the stream after its `after_chunks` item events (counted after `response.created` and
 * `response.in_progress`) with an `error` event.
 *
 * @module
 */
import type { AnswerEnvelope, WireRendering } from './answer-with-plan.js';
import { completionUsage, streamPieces, type Completion } from './completion.js';

/** What every event of one response shares. */
export interface ResponseEnvelope {
  /** `resp_…` */
  id: string;
  createdAt: number;
  model: string;
  /** Characters of the request that count towards `input_tokens`. */
  promptCharacters: number;
}

/** The events of a stream, split where a scripted stream error may cut in. */
export interface RenderedResponseStream {
  /** `response.created`, `response.in_progress`, and every item event, in order. */
  contentEvents: Record<string, unknown>[];
  /** The terminal event (`response.completed` or `response.incomplete`); none for an unfinished answer. */
  closingEvents: Record<string, unknown>[];
}

/** Events every stream opens with before the first item. */
const PREAMBLE_LENGTH = 2;

type Item = Record<string, unknown> & { id: string; type: string };

/** The output items of an answer, finished. */
function outputItems(completion: Completion, envelope: ResponseEnvelope): Item[] {
  const suffix = envelope.id.replace(/^resp_/, '');
  const items: Item[] = [];
  if (completion.reasoning !== null) {
    items.push({
      id: `rs_${suffix}`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: completion.reasoning }],
    });
  }
  if (completion.text !== null) {
    items.push({
      id: `msg_${suffix}`,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: completion.text, annotations: [] }],
    });
  }
  completion.toolCalls.forEach((call, index) => {
    items.push({
      id: `fc_${suffix}_${index}`,
      type: 'function_call',
      status: 'completed',
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
    });
  });
  return items;
}

function usageOf(completion: Completion, promptCharacters: number): Record<string, unknown> {
  const usage = completionUsage(completion, promptCharacters);
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** `status` and `incomplete_details` for a finish reason. */
function statusOf(finishReason: string | null): {
  status: string;
  incomplete_details: { reason: string } | null;
} {
  switch (finishReason) {
    case 'length':
      return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    case 'content_filter':
      return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
    case null:
    default:
      // stop, tool_calls, any other scripted reason, and none: a finished answer.
      return { status: 'completed', incomplete_details: null };
  }
}

/** The `response` object of a finished answer (also the payload of the terminal stream event). */
export function renderResponseBody(
  completion: Completion,
  envelope: ResponseEnvelope,
): Record<string, unknown> {
  return {
    ...responseShell(envelope),
    ...statusOf(completion.finishReason),
    output: outputItems(completion, envelope),
    usage: usageOf(completion, envelope.promptCharacters),
  };
}

function responseShell(envelope: ResponseEnvelope): Record<string, unknown> {
  return {
    id: envelope.id,
    object: 'response',
    created_at: envelope.createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    model: envelope.model,
    output: [],
    store: false,
    usage: null,
  };
}

/** The events of a streamed answer. */
export function renderResponseEvents(
  completion: Completion,
  envelope: ResponseEnvelope,
): RenderedResponseStream {
  const events: Record<string, unknown>[] = [];
  const add = (event: Record<string, unknown>): void => {
    events.push({ ...event, sequence_number: events.length });
  };
  add({ type: 'response.created', response: responseShell(envelope) });
  add({ type: 'response.in_progress', response: responseShell(envelope) });
  const pieces = streamPieces(completion);
  let callIndex = 0;
  outputItems(completion, envelope).forEach((item, outputIndex) => {
    const at = { item_id: item.id, output_index: outputIndex };
    if (item.type === 'reasoning') {
      const text = completion.reasoning ?? '';
      add({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...item, summary: [] },
      });
      const part = { type: 'summary_text', text: '' };
      add({ type: 'response.reasoning_summary_part.added', ...at, summary_index: 0, part });
      for (const delta of pieces.reasoning) {
        add({ type: 'response.reasoning_summary_text.delta', ...at, summary_index: 0, delta });
      }
      add({ type: 'response.reasoning_summary_text.done', ...at, summary_index: 0, text });
      add({
        type: 'response.reasoning_summary_part.done',
        ...at,
        summary_index: 0,
        part: { ...part, text },
      });
    } else if (item.type === 'message') {
      const text = completion.text ?? '';
      add({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', content: [] },
      });
      const part = { type: 'output_text', text: '', annotations: [] };
      add({ type: 'response.content_part.added', ...at, content_index: 0, part });
      for (const delta of pieces.text) {
        add({ type: 'response.output_text.delta', ...at, content_index: 0, delta, logprobs: [] });
      }
      add({ type: 'response.output_text.done', ...at, content_index: 0, text, logprobs: [] });
      add({ type: 'response.content_part.done', ...at, content_index: 0, part: { ...part, text } });
    } else {
      const argumentsText = String(item['arguments']);
      add({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      for (const delta of pieces.arguments[callIndex++] ?? []) {
        add({ type: 'response.function_call_arguments.delta', ...at, delta });
      }
      add({ type: 'response.function_call_arguments.done', ...at, arguments: argumentsText });
    }
    add({ type: 'response.output_item.done', output_index: outputIndex, item });
  });
  const contentEvents = events.splice(0);
  if (completion.finishReason === null) return { contentEvents, closingEvents: [] };
  const response = renderResponseBody(completion, envelope);
  const closing = {
    type: response['status'] === 'completed' ? 'response.completed' : 'response.incomplete',
    response,
    sequence_number: contentEvents.length,
  };
  return { contentEvents, closingEvents: [closing] };
}

/** The Responses wire: `resp_…` answers, streamed as `event:` + `data:` frames. */
export const responsesRendering: WireRendering = {
  body: (completion, envelope) => renderResponseBody(completion, responseEnvelope(envelope)),
  frames(plan, envelope) {
    const { contentEvents, closingEvents } = renderResponseEvents(
      plan.completion,
      responseEnvelope(envelope),
    );
    const events =
      plan.kind === 'stream_error'
        ? cutWithError(contentEvents.slice(0, PREAMBLE_LENGTH + plan.afterChunks), plan.error)
        : [...contentEvents, ...closingEvents];
    return events.map((event) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`);
  },
};

/** The events sent before a scripted stream error, then the `error` event. */
function cutWithError(
  sent: Record<string, unknown>[],
  error: Record<string, unknown>,
): Record<string, unknown>[] {
  const { message, code, type, param } = error;
  return [
    ...sent,
    {
      type: 'error',
      code: code ?? type ?? null,
      message: message ?? 'The mock model was scripted to fail in the middle of this stream.',
      param: param ?? null,
      sequence_number: sent.length,
    },
  ];
}

function responseEnvelope({ sequence, created, model, promptCharacters }: AnswerEnvelope): ResponseEnvelope {
  return { id: `resp_mock${sequence}`, createdAt: created, model, promptCharacters };
}
