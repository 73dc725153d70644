/**
 * The `tpx` provider's second wire: the OpenAI Responses API (`POST {base}/responses`, `TPX_WIRE=responses`).
 * The Messages request is translated (`translate-responses-request.ts`), sent with the provider's bearer
 * token, and the answer — JSON or a stream of Responses events — translated back. Authentication, token
 * refresh and error statuses are the provider's (`send-with-bearer.ts`), shared with the Chat Completions
 * wire.
 *
 * Stateless on the server: `store: false`, no `previous_response_id`; an earlier turn's reasoning travels
 * in the caller's thinking-block signatures.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import type { ResponsesStreamEvent } from '../protocol/responses.js';
import { validateResponsesResponse, validateResponsesStreamEvent } from '../protocol/validate-responses.js';
import { applyDialectToResponsesRequest } from '../translate/apply-dialect.js';
import type { DialectProfile } from '../translate/dialects.js';
import { mapResponsesError } from '../translate/map-responses-error.js';
import { translateResponsesRequest } from '../translate/translate-responses-request.js';
import {
  translateResponsesResponse,
  type ResponsesContext,
} from '../translate/translate-responses-response.js';
import { ResponsesStreamTranslator } from '../translate/translate-responses-stream.js';
import { translateStream, type StreamSteps } from '../translate/translate-stream.js';
import { offeredToolNames } from '../translate/text-tool-calls.js';
import { repairNoter } from './attempt-notes.js';
import { readBody, type AttemptContext, type HttpResponse } from './http-exchange.js';
import { messageAsEvents } from './message-as-events.js';
import { readSse, type SseMessage } from './read-sse.js';
import type { PostJson } from './send-with-bearer.js';
import { notAnEventStream, parseUpstreamJson } from './upstream-answer.js';

/** Events every Responses stream opens with, before the model produced anything. */
const PREAMBLE_EVENTS: ReadonlySet<string> = new Set([
  'response.created',
  'response.in_progress',
  'response.queued',
]);

/** What the Responses wire needs from the provider's configuration. */
export interface ResponsesWireConfig {
  baseUrl: string;
  /** Model sent upstream. @default the request's `model` */
  model: string | undefined;
  generateId: () => string;
  /** The dialect profile: its endpoint shape (Azure's route) and the tool schemas its server accepts. */
  dialect?: DialectProfile | undefined;
  /** Read tool calls the model wrote as text as calls (`text-tool-calls.ts`). @default false */
  textToolCalls?: boolean | undefined;
}

/**
 * The Responses endpoint: `{base}/responses`. Azure serves it only on its v1 route, so an Azure resource
 * URL (`https://name.openai.azure.com`, `…/openai`, `…/openai/deployments/x`) becomes
 * `{resource}/openai/v1/responses`.
 */
export function responsesUrl(baseUrl: string, dialect?: DialectProfile): string {
  const base = baseUrl.replace(/\/+$/, '');
  if (dialect?.endpoint !== 'azure-deployment') return `${base}/responses`;
  const url = new URL(base);
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/openai\/v1$/.test(path)) return `${base}/responses`;
  const resource = path.replace(/\/openai(\/deployments\/[^/]+)?$/, '');
  return `${url.origin}${resource}/openai/v1/responses`;
}

function protocolError(message: string): TransportError {
  return new TransportError('MODEL_EPROTO', message, { provider: 'tpx' });
}

function prepare(
  request: MessagesRequest,
  config: ResponsesWireConfig,
  attempt: AttemptContext,
  streaming: boolean,
) {
  const translated = translateResponsesRequest(
    { ...request, stream: streaming },
    { model: config.model ?? request.model },
  );
  const context: ResponsesContext = {
    requestModel: request.model,
    toolNames: translated.toolNames,
    toolSchemas: translated.toolSchemas,
    textToolCalls: config.textToolCalls === true ? offeredToolNames(translated.body.tools) : undefined,
    onRepair: repairNoter(attempt.notes),
    generateId: config.generateId,
    maxOutputTokens: translated.body.max_output_tokens,
  };
  const body =
    config.dialect === undefined
      ? translated.body
      : applyDialectToResponsesRequest(config.dialect, translated.body);
  return { body: JSON.stringify(body), context };
}

/** A whole JSON answer, translated. A 200 body holding only an error object is that error. */
async function readJsonAnswer(
  response: HttpResponse,
  attempt: AttemptContext,
  context: ResponsesContext,
): Promise<Message> {
  const payload = parseUpstreamJson(await readBody(response, attempt), 'response', 'tpx');
  if (
    typeof payload === 'object' &&
    payload !== null &&
    'error' in payload &&
    payload.error !== null &&
    !('output' in payload)
  ) {
    throw mapResponsesError(payload.error);
  }
  const validated = validateResponsesResponse(payload);
  if (!validated.ok) {
    throw protocolError(`the tpx response is not a valid Responses API response: ${validated.message}`);
  }
  return translateResponsesResponse(validated.value, context);
}

/** One attempt of `send` over the Responses wire. */
export async function sendOverResponses(
  request: MessagesRequest,
  config: ResponsesWireConfig,
  attempt: AttemptContext,
  post: PostJson,
): Promise<Message> {
  const { body, context } = prepare(request, config, attempt, false);
  const response = await post(responsesUrl(config.baseUrl, config.dialect), body, false);
  return readJsonAnswer(response, attempt, context);
}

/**
 * One attempt of `stream` over the Responses wire, as batches of Messages events (one per chunk of the
 * upstream body; see `translateStream`). `estimateInputTokens` fills `message_start.usage.input_tokens`
 * before the real count arrives.
 */
export async function* streamOverResponses(
  request: MessagesRequest,
  config: ResponsesWireConfig,
  attempt: AttemptContext,
  post: PostJson,
  estimateInputTokens?: (request: MessagesRequest) => Promise<number | undefined>,
): AsyncGenerator<MessageStreamEvent[]> {
  const { body, context } = prepare(request, config, attempt, true);
  const sent = post(responsesUrl(config.baseUrl, config.dialect), body, true);
  // The estimate (for message_start) is computed while the upstream works on its first byte; a failure of
  // the request meanwhile is handled by the `await` below.
  sent.catch(() => undefined);
  const inputTokensEstimate = await estimateInputTokens?.(request);
  const response = await sent;
  const contentType = response.headers['content-type'] ?? '';
  if (!contentType.includes('text/event-stream')) {
    // A server that ignores `stream: true` and answers JSON: that answer, as a stream.
    if (!contentType.includes('json')) throw await notAnEventStream(response, attempt, contentType, 'tpx');
    yield [...messageAsEvents(await readJsonAnswer(response, attempt, context))];
    return;
  }
  const translator = new ResponsesStreamTranslator({ ...context, inputTokensEstimate });
  yield* translateStream(eventBatches(response, attempt), responsesStreamSteps(translator));
}

/**
 * The steps of a Responses stream. message_start waits for the first upstream event past the preamble, as
 * on the Chat Completions wire: the preamble (`response.created`, `.in_progress`, `.queued`) says nothing
 * yet, so an error right after it still fails the attempt before the caller saw anything. A stream that
 * ends without its terminal event fails (`end()`).
 */
function responsesStreamSteps(translator: ResponsesStreamTranslator): StreamSteps<ResponsesStreamEvent> {
  return {
    start: () => translator.start(),
    push(event) {
      const events = translator.push(event);
      return PREAMBLE_EVENTS.has(event.type) ? undefined : events;
    },
    get isFinished() {
      return translator.isFinished;
    },
    end: () => translator.end(),
  };
}

/** The stream's events, a batch per chunk of the body, each read only as it is translated. */
async function* eventBatches(
  response: HttpResponse,
  attempt: AttemptContext,
): AsyncGenerator<Iterable<ResponsesStreamEvent>> {
  for await (const messages of readSse(response, attempt)) yield readEvents(messages);
}

/**
 * The Responses events of one batch of server-sent events. Blank data and `[DONE]` give nothing; an
 * `event: error` or an event that cannot be read is thrown where it stands, after the events before it.
 */
function* readEvents(messages: readonly SseMessage[]): Generator<ResponsesStreamEvent> {
  for (const sse of messages) {
    const data = sse.data.trim();
    if (data === '' || data === '[DONE]') continue;
    const payload = parseUpstreamJson(data, 'stream event', 'tpx');
    if (sse.event === 'error') throw mapResponsesError(payload);
    const validated = validateResponsesStreamEvent(payload);
    if (!validated.ok) {
      throw protocolError(`the tpx stream sent an invalid Responses event: ${validated.message}`);
    }
    yield validated.value;
  }
}
