/**
 * The `tpx` provider's first wire: Chat Completions (`TPX_WIRE=chat`, the default). The Messages request
 * is translated (`translate-request.ts`), shaped for the server's dialect (`translate/dialects.ts`), sent
 * to the dialect's endpoint (`{base}/chat/completions`, Azure's deployment route, Vertex's
 * `…/endpoints/openapi`), and the answer — JSON or a stream — normalized for the dialect and translated
 * back. Authentication, token refresh and error statuses are the provider's (`send-with-bearer.ts`),
 * shared with the Responses wire.
 *
 * @module
 */
import type { ChatCompletionChunk } from '../protocol/chat-completions.js';
import { TransportError } from '../errors.js';
import { stringifyExactJson } from '../protocol/exact-json.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import {
  validateChatCompletionChunk,
  validateChatCompletionResponse,
} from '../protocol/validate-chat-completions.js';
import {
  applyDialectToRequest,
  createChunkNormalizer,
  normalizeResponse,
} from '../translate/apply-dialect.js';
import { chatCompletionsUrl, type DialectProfile, type EndpointOptions } from '../translate/dialects.js';
import { mapStreamErrorObject } from '../translate/map-stream-error-object.js';
import {
  translateRequest,
  type TranslatedRequest,
  type TranslateRequestOptions,
} from '../translate/translate-request.js';
import { offeredToolNames } from '../translate/text-tool-calls.js';
import { translateResponse } from '../translate/translate-response.js';
import { chatStreamSteps, translateStream, type ChatStreamItem } from '../translate/translate-stream.js';
import { noteUpstreamModel, repairNoter } from './attempt-notes.js';
import { readBody, type AttemptContext, type HttpResponse } from './http-exchange.js';
import { isEventStream, isJson } from './media-type.js';
import { messageAsEvents } from './message-as-events.js';
import { readSse, type SseMessage } from './read-sse.js';
import type { PostJson } from './send-with-bearer.js';
import { notAnEventStream, parseJsonLoose, parseUpstreamJson } from './upstream-answer.js';

/** What the Chat Completions wire needs from the provider's configuration. */
export interface ChatWireConfig {
  baseUrl: string;
  generateId: () => string;
  /** The server's dialect profile. */
  dialect: DialectProfile;
  /** Azure's `api-version`. @default DEFAULT_AZURE_API_VERSION */
  azureApiVersion?: string | undefined;
  /** Overrides the dialect's max-tokens field. @default the dialect's */
  maxTokensField?: TranslateRequestOptions['maxTokensField'];
  /** Read tool calls the model wrote as text as calls (`text-tool-calls.ts`). @default false */
  textToolCalls?: boolean | undefined;
}

/** A request as it goes out on the Chat Completions wire. */
export interface ChatRequest {
  /** The translated body, shaped for the dialect. */
  body: ReturnType<typeof applyDialectToRequest>;
  toolNames: TranslatedRequest['toolNames'];
  toolSchemas: TranslatedRequest['toolSchemas'];
  /** The tool names offered upstream, when tool calls written as text are read; else `undefined`. */
  textToolCalls: ReadonlySet<string> | undefined;
  url: string;
}

/** Where the dialect's routes are for `model` (the model goes in Azure's deployment route). */
export function chatEndpoint(config: ChatWireConfig, model: string): EndpointOptions {
  const options: EndpointOptions = { baseUrl: config.baseUrl, model };
  if (config.azureApiVersion !== undefined) options.azureApiVersion = config.azureApiVersion;
  return options;
}

/** Translates `request` for the Chat Completions wire. */
export function chatRequest(
  request: MessagesRequest,
  config: ChatWireConfig,
  streaming: boolean,
): ChatRequest {
  const { dialect } = config;
  // The transport's model mapping has already put the upstream model (TPX_MODEL among its rules) here.
  const model = request.model;
  const options: TranslateRequestOptions = {
    model,
    maxTokensField: config.maxTokensField ?? dialect.maxTokensField,
    dialect,
  };
  const translated = translateRequest({ ...request, stream: streaming }, options);
  const body = applyDialectToRequest(dialect, translated.body);
  return {
    body,
    toolNames: translated.toolNames,
    toolSchemas: translated.toolSchemas,
    textToolCalls: config.textToolCalls === true ? offeredToolNames(body.tools) : undefined,
    url: chatCompletionsUrl(dialect, chatEndpoint(config, model)),
  };
}

/** Posts the translated request; a 2xx answer (an error status is thrown by `post`). */
function postChat(
  prepared: ChatRequest,
  request: MessagesRequest,
  attempt: AttemptContext,
  post: PostJson,
  streaming: boolean,
): Promise<HttpResponse> {
  noteUpstreamModel(attempt.notes, prepared.body.model);
  return post(prepared.url, stringifyExactJson(prepared.body), streaming, request.model);
}

function protocolError(message: string): TransportError {
  return new TransportError('MODEL_EPROTO', message, { provider: 'tpx' });
}

/**
 * A whole JSON answer, translated: the `send` path, and streams from servers that ignore `stream: true`.
 * A 200 body holding only an error object is that error.
 */
async function readChatAnswer(
  response: HttpResponse,
  attempt: AttemptContext,
  request: MessagesRequest,
  prepared: ChatRequest,
  config: ChatWireConfig,
): Promise<Message> {
  const payload = parseUpstreamJson(await readBody(response, attempt), 'response', 'tpx');
  if (typeof payload === 'object' && payload !== null && 'error' in payload && !('choices' in payload)) {
    throw mapStreamErrorObject(payload.error, 'tpx');
  }
  const validated = validateChatCompletionResponse(payload);
  if (!validated.ok) {
    throw protocolError(`the tpx response is not a valid chat completion: ${validated.message}`);
  }
  return translateResponse(normalizeResponse(config.dialect, validated.value), {
    requestModel: request.model,
    toolNames: prepared.toolNames,
    toolSchemas: prepared.toolSchemas,
    textToolCalls: prepared.textToolCalls,
    onRepair: repairNoter(attempt.notes),
    generateId: config.generateId,
  });
}

/** One attempt of `send` over the Chat Completions wire. */
export async function sendOverChat(
  request: MessagesRequest,
  config: ChatWireConfig,
  attempt: AttemptContext,
  post: PostJson,
): Promise<Message> {
  const prepared = chatRequest(request, config, false);
  const response = await postChat(prepared, request, attempt, post, false);
  return readChatAnswer(response, attempt, request, prepared, config);
}

/**
 * One attempt of `stream` over the Chat Completions wire, as batches of Messages events (one per chunk of
 * the upstream body; see `translateStream`). `estimateInputTokens` fills `message_start.usage.input_tokens`
 * before the real count arrives.
 */
export async function* streamOverChat(
  request: MessagesRequest,
  config: ChatWireConfig,
  attempt: AttemptContext,
  post: PostJson,
  estimateInputTokens?: (request: MessagesRequest) => Promise<number | undefined>,
): AsyncGenerator<MessageStreamEvent[]> {
  const prepared = chatRequest(request, config, true);
  const sent = postChat(prepared, request, attempt, post, true);
  // The estimate is computed while the upstream works on its first byte; a failure of the request in
  // the meantime is handled by the `await` below, not reported as unhandled.
  sent.catch(() => undefined);
  const inputTokensEstimate = await estimateInputTokens?.(request);
  const response = await sent;
  const contentType = response.headers['content-type'] ?? '';
  if (!isEventStream(contentType)) {
    // Some servers ignore `stream: true` and answer JSON; translate that answer as a stream.
    if (!isJson(contentType)) throw await notAnEventStream(response, attempt, contentType, 'tpx');
    yield [...messageAsEvents(await readChatAnswer(response, attempt, request, prepared, config))];
    return;
  }
  const steps = chatStreamSteps({
    requestModel: request.model,
    toolNames: prepared.toolNames,
    toolSchemas: prepared.toolSchemas,
    textToolCalls: prepared.textToolCalls,
    onRepair: repairNoter(attempt.notes),
    generateId: config.generateId,
    inputTokensEstimate,
  });
  yield* translateStream(chunkBatches(response, attempt, config.dialect), steps);
}

/** The stream's chunks, a batch per chunk of the body, each read only as it is translated. */
async function* chunkBatches(
  response: HttpResponse,
  attempt: AttemptContext,
  dialect: DialectProfile,
): AsyncGenerator<Iterable<ChatStreamItem>> {
  const normalize = createChunkNormalizer(dialect);
  for await (const messages of readSse(response, attempt)) yield readChunks(messages, normalize);
}

/**
 * The chunks of one batch of server-sent events, normalized for the dialect, up to `[DONE]` (as
 * `'done'`). Blank data and keep-alives give nothing; an `event: error` or a chunk that cannot be read is
 * thrown where it stands, after the chunks before it.
 */
function* readChunks(
  messages: readonly SseMessage[],
  normalize: (chunk: ChatCompletionChunk) => ChatCompletionChunk,
): Generator<ChatStreamItem> {
  for (const sse of messages) {
    const data = sse.data.trim();
    if (sse.event === 'error') {
      const payload = data === '' ? {} : parseJsonLoose(data);
      const errorObject = (payload as { error?: unknown } | null)?.error ?? payload;
      throw mapStreamErrorObject(errorObject, 'tpx');
    }
    // `event: ping` is a keep-alive some servers and gateways send; clients skip it.
    if (data === '' || sse.event === 'ping') continue;
    if (data === '[DONE]') {
      yield 'done';
      return;
    }
    const chunk = parseUpstreamJson(data, 'stream chunk', 'tpx');
    if (isPing(chunk)) continue;
    const validated = validateChatCompletionChunk(chunk);
    if (!validated.ok) throw protocolError(`the tpx stream sent an invalid chunk: ${validated.message}`);
    yield normalize(validated.value);
  }
}

/** A keep-alive sent as data: `{"type":"ping"}`, with no `choices`. */
function isPing(payload: unknown): boolean {
  return (
    typeof payload === 'object' &&
    payload !== null &&
    (payload as { type?: unknown }).type === 'ping' &&
    !('choices' in payload)
  );
}
