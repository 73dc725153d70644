/**
 * The `anthropic` provider: the Messages body goes out natively to `{base}/v1/messages`, the answer is
 * validated (the whole message, or each stream event and the stream's grammar) and handed back.
 *
 * @module
 */
import { TransportError, errorTypeForStatus, isRetryableStatus, statusForErrorType } from '../errors.js';
import type { Message, MessagesRequest, MessageStreamEvent, ToolUseBlock } from '../protocol/messages.js';
import { isObject } from '../protocol/is-object.js';
import { createStreamGrammar } from '../protocol/stream-grammar.js';
import { isKnownEventType, validateMessage, validateStreamEvent } from '../protocol/validate-messages.js';
import { completeCutJson } from '../translate/complete-cut-json.js';
import { mapModelList, modelList } from '../translate/map-model-list.js';
import type { ExchangeOptions, TokenCount, UpstreamReport } from './exchange-types.js';
import { pickResponseHeaders } from '../translate/pick-response-headers.js';
import { httpRequest, readBody, type AttemptContext, type HttpResponse } from './http-exchange.js';
import { explainUpstreamError } from './explain-upstream-error.js';
import { inspectOpenAiUpstream } from './inspect-upstream.js';
import { isEventStream } from './media-type.js';
import type { Provider, ReportResponse } from './provider.js';
import { rememberRawJson } from './raw-json.js';
import { readSse, type SseMessage } from './read-sse.js';
import { ERROR_BODY_LIMIT, parseUpstreamJson, upstreamError } from './upstream-answer.js';
import { stringifyExactJson } from '../protocol/exact-json.js';

const DEFAULT_VERSION = '2023-06-01';
/** Error bodies are read up to this size; the rest is not needed to explain the error. */

export interface AnthropicConfig {
  apiKey: string;
  baseUrl: string;
}

function headerValue(value: string | string[] | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const joined = Array.isArray(value) ? value.join(',') : value;
  if (/[\r\n\0]/.test(joined)) {
    throw new TransportError('MODEL_EINVAL', `the ${name} header contains a line break or NUL character`);
  }
  return joined.trim() === '' ? undefined : joined;
}

function callerHeader(options: ExchangeOptions, name: string): string | undefined {
  const headers = options.headers;
  if (headers === undefined) return undefined;
  for (const key in headers) if (key.toLowerCase() === name) return headerValue(headers[key], name);
  return undefined;
}

function buildUrl(baseUrl: string, query: string | undefined, path = '/v1/messages'): string {
  if (query === undefined || query === '') return `${baseUrl}${path}`;
  if (/[\s#]/.test(query))
    throw new TransportError('MODEL_EINVAL', 'the query string contains whitespace or "#"');
  return `${baseUrl}${path}?${query.replace(/^\?/, '')}`;
}

function buildHeaders(
  config: AnthropicConfig,
  options: ExchangeOptions,
  streaming: boolean,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: streaming ? 'text/event-stream' : 'application/json',
    'x-api-key': config.apiKey,
    'anthropic-version': callerHeader(options, 'anthropic-version') ?? DEFAULT_VERSION,
  };
  const beta = callerHeader(options, 'anthropic-beta');
  if (beta !== undefined) headers['anthropic-beta'] = beta;
  return headers;
}

function buildBody(
  request: MessagesRequest,
  options: ExchangeOptions,
  streaming: boolean,
): string | Uint8Array {
  // The caller's bytes go out as written when they already say what we are about to do.
  if (options.rawBody !== undefined && (request.stream === true) === streaming) return options.rawBody;
  if ((request.stream === true) === streaming) return stringifyExactJson(request);
  return stringifyExactJson({ ...request, stream: streaming });
}

async function failOnStatus(
  response: HttpResponse,
  context: AttemptContext,
  call?: { url: string; model: string },
): Promise<never> {
  const error = await upstreamError(response, context, 'anthropic');
  if (call === undefined) throw error;
  throw explainUpstreamError(error, {
    method: 'POST',
    ...call,
    baseUrlVariable: 'ANTHROPIC_BASE_URL',
    routesAddV1: true,
  });
}

function parseJson(text: string, what: string): unknown {
  return parseUpstreamJson(text, what, 'anthropic');
}

/** The `{type, message}` of a Messages error body, or `undefined` when `payload` is not one. */
function readErrorBody(payload: unknown): { type: string; message: string } | undefined {
  if (typeof payload !== 'object' || payload === null || (payload as { type?: unknown }).type !== 'error')
    return undefined;
  const error = (payload as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, message } = error as { type?: unknown; message?: unknown };
  if (typeof type !== 'string') return undefined;
  return { type, message: typeof message === 'string' ? message : '' };
}

/**
 * The error for an error object inside a 200 answer (an `event: error`, or a JSON error body): the status
 * its type stands for, retryable as that status would be.
 */
function errorInAnswer(
  error: { type: string; message: string },
  where: 'response' | 'stream',
): TransportError {
  const status = statusForErrorType(error.type);
  const what =
    where === 'stream' ? 'the anthropic stream failed' : 'the anthropic endpoint answered 200 with an error';
  return new TransportError('MODEL_EHTTP', `${what}: ${error.type}: ${error.message}`, {
    provider: 'anthropic',
    status,
    type: errorTypeForStatus(status),
    retryable: isRetryableStatus(status),
  });
}

/** The first tool_use id used by two blocks of one message, if any. */
function firstDuplicateToolId(content: Message['content']): string | undefined {
  const seen = new Set<string>();
  for (const block of content) {
    if (block.type !== 'tool_use') continue;
    const id = (block as ToolUseBlock).id;
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}

/**
 * Two tool calls with one id cannot both be answered: the next request would carry two tool_results
 * for that id, which the pairing check (and Anthropic) refuse. The native path passes ids through as
 * sent, so such an answer is refused rather than handed on.
 */
function duplicateToolId(id: string): TransportError {
  return new TransportError(
    'MODEL_EPROTO',
    `the anthropic answer uses the tool_use id ${JSON.stringify(id)} for two calls; tool_use ids must be unique`,
    { provider: 'anthropic' },
  );
}

/** Whether joined `input_json_delta` fragments form a tool input: a JSON object, or nothing at all. */
function isToolInput(text: string): boolean {
  if (!/\S/.test(text)) return true;
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value);
  } catch {
    return false;
  }
}

/**
 * llama.cpp's `/v1/messages` stream (b11669) opens a `tool_use` block without the `input: {}` that
 * Anthropic sends (the input arrives only as `input_json_delta` fragments, as it always does). Such a
 * block is read as carrying that empty input, so the caller gets the documented event shape.
 */
function withEmptyToolInput(payload: unknown): unknown {
  const event = payload as { type?: unknown; content_block?: unknown } | null;
  if (event?.type !== 'content_block_start') return payload;
  const block = event.content_block as { type?: unknown; input?: unknown } | null | undefined;
  if (typeof block !== 'object' || block === null || block.type !== 'tool_use' || 'input' in block)
    return payload;
  return { ...event, content_block: { ...block, input: {} } };
}

/**
 * The `models` list of a server that speaks Messages but lists its models in OpenAI's shape (llama.cpp:
 * `{"object":"list","data":[{"id":…,"object":"model",…}]}`), mapped to the Messages list shape; an
 * Anthropic list (every entry `type: "model"`) is handed on as it came.
 */
function asMessagesModelList(payload: { data: unknown[] }): unknown {
  const isMessagesList = payload.data.every(
    (entry) => (entry as { type?: unknown } | null)?.type === 'model',
  );
  if (isMessagesList) return payload;
  return mapModelList(payload) ?? modelList([]);
}

function unreadableToolInput(input: { index: number; text: string }): TransportError {
  const shown = input.text.length <= 100 ? input.text : `${input.text.slice(0, 100)}…`;
  return new TransportError(
    'MODEL_EPROTO',
    `the anthropic stream sent tool input for block ${input.index} that is not a JSON object: ${JSON.stringify(shown)}`,
    { provider: 'anthropic' },
  );
}

/** Creates the native provider for one key and base URL. */
export function createAnthropicProvider(config: AnthropicConfig): Provider {
  return {
    name: 'anthropic',

    async send(request, options, context, report: ReportResponse): Promise<Message> {
      const response = await httpRequest(
        buildUrl(config.baseUrl, options.query),
        {
          method: 'POST',
          headers: buildHeaders(config, options, false),
          body: buildBody(request, options, false),
        },
        context,
      );
      report(response.status, pickResponseHeaders(response.headers));
      if (response.status < 200 || response.status > 299)
        await failOnStatus(response, context, {
          url: buildUrl(config.baseUrl, options.query),
          model: request.model,
        });
      const text = await readBody(response, context);
      const payload = parseJson(text, 'response');
      const answeredError = readErrorBody(payload);
      if (answeredError !== undefined) throw errorInAnswer(answeredError, 'response');
      const validated = validateMessage(payload);
      if (!validated.ok) {
        throw new TransportError(
          'MODEL_EPROTO',
          `the anthropic response is not a valid message: ${validated.message}`,
          {
            provider: 'anthropic',
          },
        );
      }
      const duplicate = firstDuplicateToolId(validated.value.content);
      if (duplicate !== undefined) throw duplicateToolId(duplicate);
      // The validated message is the upstream's own: a relay may send its text on unchanged.
      if (validated.value === payload) rememberRawJson(validated.value, text);
      return validated.value;
    },

    async *stream(request, options, context, report: ReportResponse): AsyncGenerator<MessageStreamEvent[]> {
      const response = await httpRequest(
        buildUrl(config.baseUrl, options.query),
        {
          method: 'POST',
          headers: buildHeaders(config, options, true),
          body: buildBody(request, options, true),
        },
        context,
      );
      report(response.status, pickResponseHeaders(response.headers));
      if (response.status < 200 || response.status > 299)
        await failOnStatus(response, context, {
          url: buildUrl(config.baseUrl, options.query),
          model: request.model,
        });
      const contentType = response.headers['content-type'] ?? '';
      if (!isEventStream(contentType)) {
        const text = await readBody(response, context, ERROR_BODY_LIMIT).catch(() => '');
        throw new TransportError(
          'MODEL_EPROTO',
          `the anthropic endpoint answered a stream request with ${contentType || 'no content type'}, not text/event-stream: ${JSON.stringify(text.slice(0, 120))}`,
          { provider: 'anthropic' },
        );
      }
      const grammar = createStreamGrammar();
      const toolIds = new Set<string>();
      const toolInputs = new Map<number, string[]>();
      let brokenInput: { index: number; text: string } | undefined;
      /** The block open now, and blocks closed before the server closed them (see below). */
      let openBlock: number | undefined;
      const closedEarly = new Set<number>();
      /** Applies the stream's rules to one validated event, adding what to deliver to `delivered`. */
      const deliver = (event: MessageStreamEvent, delivered: MessageStreamEvent[]): void => {
        if (event.type === 'content_block_start' && openBlock !== undefined) {
          // llama.cpp's `/v1/messages` stream (b11669) starts the next block without stopping the open one
          // and sends every content_block_stop at the end. Blocks follow one another there, never
          // interleave, so the open one is stopped here and its late stop dropped: one block open at a
          // time, as the Messages stream grammar and its clients expect.
          const index = openBlock;
          deliver({ type: 'content_block_stop', index }, delivered);
          closedEarly.add(index);
        }
        if (event.type === 'content_block_stop' && closedEarly.delete(event.index)) return;
        if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
          const id = (event.content_block as { id: string }).id;
          if (toolIds.has(id)) throw duplicateToolId(id);
          toolIds.add(id);
          toolInputs.set(event.index, []);
        } else if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') {
          toolInputs.get(event.index)?.push(event.delta.partial_json);
        } else if (event.type === 'content_block_stop') {
          const fragments = toolInputs.get(event.index);
          toolInputs.delete(event.index);
          const text = fragments?.join('') ?? '';
          if (fragments !== undefined && !isToolInput(text)) {
            // A cut input is completed by appending only, as on the tpx path (`complete-cut-json.ts`): one
            // more fragment before the block ends, so the message accumulates. Whether a cut was allowed
            // is settled at message_delta: only `max_tokens` may cut a tool call. Input that no suffix
            // makes an object, or a second cut input (the limit cuts once), is refused at once.
            const suffix = completeCutJson(text);
            if (suffix === undefined || brokenInput !== undefined) {
              throw unreadableToolInput({ index: event.index, text });
            }
            brokenInput = { index: event.index, text };
            if (suffix !== '') {
              deliver(
                {
                  type: 'content_block_delta',
                  index: event.index,
                  delta: { type: 'input_json_delta', partial_json: suffix },
                },
                delivered,
              );
            }
          }
        } else if (event.type === 'message_delta' && brokenInput !== undefined) {
          // The token limit may cut a tool call's JSON, as it does for any text; any other ending means the
          // upstream sent a tool call whose input cannot be read (A.7: the fragments form one JSON object).
          if (event.delta.stop_reason !== 'max_tokens') throw unreadableToolInput(brokenInput);
        }
        const violation = grammar.accept(event);
        if (violation !== undefined) {
          throw new TransportError(
            'MODEL_EPROTO',
            `the anthropic stream broke the event order: ${violation}`,
            {
              provider: 'anthropic',
            },
          );
        }
        if (event.type === 'content_block_start') openBlock = event.index;
        else if (event.type === 'content_block_stop') openBlock = undefined;
        delivered.push(event);
      };
      /** Checks one server-sent event; the events to deliver (none to skip it). */
      const accept = (sse: SseMessage): MessageStreamEvent[] => {
        const data = sse.data.trim();
        if (data === '') return [];
        const payload = withEmptyToolInput(parseJson(data, 'stream event'));
        const type = (payload as { type?: unknown } | null)?.type;
        if (typeof type === 'string' && !isKnownEventType(type)) return []; // future event types are skipped
        const validated = validateStreamEvent(payload);
        if (!validated.ok) {
          throw new TransportError(
            'MODEL_EPROTO',
            `the anthropic stream sent an invalid event: ${validated.message}`,
            {
              provider: 'anthropic',
            },
          );
        }
        const event = validated.value;
        // Retried like the status it stands for when nothing reached the caller yet (an overloaded_error
        // first is a 529, PROTOCOLS.md A.7); the transport never retries once events were delivered.
        if (event.type === 'error') throw errorInAnswer(event.error, 'stream');
        const delivered: MessageStreamEvent[] = [];
        deliver(event, delivered);
        return delivered;
      };
      for await (const messages of readSse(response, context)) {
        const batch: MessageStreamEvent[] = [];
        let stopped = false;
        try {
          for (const sse of messages) {
            const events = accept(sse);
            batch.push(...events);
            if (events.at(-1)?.type === 'message_stop') {
              stopped = true;
              break;
            }
          }
        } catch (error) {
          // What the chunk held before the failure is delivered first, as an unbatched stream would.
          if (batch.length > 0) yield batch;
          throw error;
        }
        if (batch.length > 0) yield batch;
        if (stopped) return;
      }
      throw new TransportError('MODEL_EPROTO', 'the anthropic stream ended before message_stop', {
        provider: 'anthropic',
        retryable: false,
      });
    },

    async countTokens(request, options, context, report: ReportResponse): Promise<TokenCount> {
      const response = await httpRequest(
        buildUrl(config.baseUrl, options.query, '/v1/messages/count_tokens'),
        {
          method: 'POST',
          headers: buildHeaders(config, options, false),
          body: options.rawBody ?? stringifyExactJson(request),
        },
        context,
      );
      report(response.status, pickResponseHeaders(response.headers));
      if (response.status < 200 || response.status > 299) await failOnStatus(response, context);
      const payload = parseJson(await readBody(response, context), 'count_tokens response');
      if (typeof (payload as { input_tokens?: unknown } | null)?.input_tokens !== 'number') {
        throw new TransportError(
          'MODEL_EPROTO',
          'the anthropic count_tokens response has no numeric input_tokens',
          {
            provider: 'anthropic',
          },
        );
      }
      return payload as TokenCount;
    },

    async listModels(options, context, report: ReportResponse): Promise<unknown> {
      const headers = buildHeaders(config, options, false);
      delete headers['content-type'];
      const response = await httpRequest(
        buildUrl(config.baseUrl, options.query, '/v1/models'),
        { method: 'GET', headers },
        context,
      );
      report(response.status, pickResponseHeaders(response.headers));
      if (response.status < 200 || response.status > 299) await failOnStatus(response, context);
      const payload = parseJson(await readBody(response, context), 'models response');
      if (!Array.isArray((payload as { data?: unknown } | null)?.data)) {
        throw new TransportError('MODEL_EPROTO', 'the anthropic models response has no data array', {
          provider: 'anthropic',
        });
      }
      return asMessagesModelList(payload as { data: unknown[] });
    },

    inspect(options, context, report: ReportResponse): Promise<UpstreamReport> {
      const headers = buildHeaders(config, options, false);
      delete headers['content-type'];
      const get = async (url: string) => {
        const response = await httpRequest(url, { method: 'GET', headers }, context);
        report(response.status, pickResponseHeaders(response.headers));
        // A refused key is an answer about the credentials, not about the list.
        if (response.status === 401) await failOnStatus(response, context);
        return response;
      };
      return inspectOpenAiUpstream(get, context, {
        modelsUrl: buildUrl(config.baseUrl, undefined, '/v1/models'),
      });
    },
  };
}
