/**
 * The `tpx` provider: the Messages request is translated to Chat Completions, sent with the OAuth
 * bearer token to `{base}/chat/completions`, and the answer — JSON or a stream — translated back.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { ChatCompletionChunk } from '../protocol/chat-completions.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import {
  validateChatCompletionChunk,
  validateChatCompletionResponse,
} from '../protocol/validate-chat-completions.js';
import { estimateInputTokens, loadTokenCounter } from '../translate/estimate-input-tokens.js';
import { fallbackModelList, mapModelList } from '../translate/map-model-list.js';
import { mapStreamErrorObject, mapUpstreamError } from '../translate/map-upstream-error.js';
import { translateRequest, type TranslateRequestOptions } from '../translate/translate-request.js';
import { translateResponse } from '../translate/translate-response.js';
import { StreamTranslator } from '../translate/translate-stream.js';
import type { ExchangeOptions, TokenCount } from '../transport/types.js';
import {
  httpRequest,
  pickResponseHeaders,
  readBody,
  type AttemptContext,
  type HttpResponse,
} from './http-exchange.js';
import type { Provider, ReportResponse } from './provider.js';
import { readSse } from './read-sse.js';

const ERROR_BODY_LIMIT = 64 * 1024;

export interface TpxConfig {
  /** Returns the current bearer token (it may be refreshed from the same source). */
  token: () => string;
  baseUrl: string;
  model: string | undefined;
  generateId: () => string;
  maxTokensField?: TranslateRequestOptions['maxTokensField'];
}

function protocolError(message: string): TransportError {
  return new TransportError('MODEL_EPROTO', message, { provider: 'tpx' });
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    const excerpt = text.slice(0, 120).replace(/\s+/g, ' ');
    throw protocolError(`the tpx ${what} is not valid JSON: ${JSON.stringify(excerpt)}`);
  }
}

async function failOnStatus(response: HttpResponse, context: AttemptContext): Promise<never> {
  let bodyText = '';
  try {
    bodyText = await readBody(response, context, ERROR_BODY_LIMIT);
  } catch {
    // The status alone still explains the failure.
  }
  const input: Parameters<typeof mapUpstreamError>[0] = {
    status: response.status,
    bodyText,
    headers: response.headers,
    provider: 'tpx',
  };
  const contentType = response.headers['content-type'];
  if (contentType !== undefined) input.contentType = contentType;
  throw mapUpstreamError(input);
}

/** Creates the OpenAI-compatible provider. */
export function createTpxProvider(config: TpxConfig): Provider {
  const url = `${config.baseUrl}/chat/completions`;

  function prepare(request: MessagesRequest, streaming: boolean) {
    const options: TranslateRequestOptions = {};
    const model = config.model ?? request.model;
    options.model = model;
    if (config.maxTokensField !== undefined) options.maxTokensField = config.maxTokensField;
    const translated = translateRequest({ ...request, stream: streaming }, options);
    const headers = {
      'content-type': 'application/json',
      accept: streaming ? 'text/event-stream' : 'application/json',
      authorization: `Bearer ${config.token()}`,
    };
    return { translated, headers };
  }

  return {
    name: 'tpx',

    async send(request, _options: ExchangeOptions, context, report: ReportResponse): Promise<Message> {
      const { translated, headers } = prepare(request, false);
      const response = await httpRequest(
        url,
        { method: 'POST', headers, body: JSON.stringify(translated.body) },
        context,
      );
      report(response.status, pickResponseHeaders(response.headers));
      if (response.status < 200 || response.status > 299) await failOnStatus(response, context);
      const payload = parseJson(await readBody(response, context), 'response');
      if (typeof payload === 'object' && payload !== null && 'error' in payload && !('choices' in payload)) {
        throw mapStreamErrorObject(payload.error, 'tpx');
      }
      const validated = validateChatCompletionResponse(payload);
      if (!validated.ok)
        throw protocolError(`the tpx response is not a valid chat completion: ${validated.message}`);
      return translateResponse(validated.value, {
        requestModel: request.model,
        toolNames: translated.toolNames,
        generateId: config.generateId,
      });
    },

    async *stream(
      request,
      _options: ExchangeOptions,
      context,
      report: ReportResponse,
    ): AsyncGenerator<MessageStreamEvent> {
      const { translated, headers } = prepare(request, true);
      const response = await httpRequest(
        url,
        { method: 'POST', headers, body: JSON.stringify(translated.body) },
        context,
      );
      report(response.status, pickResponseHeaders(response.headers));
      if (response.status < 200 || response.status > 299) await failOnStatus(response, context);
      const contentType = response.headers['content-type'] ?? '';
      if (!contentType.includes('text/event-stream')) {
        // Some servers ignore `stream: true` and answer JSON; translate that answer as a stream.
        if (contentType.includes('json')) {
          const payload = parseJson(await readBody(response, context), 'response');
          const validated = validateChatCompletionResponse(payload);
          if (!validated.ok)
            throw protocolError(`the tpx response is not a valid chat completion: ${validated.message}`);
          const message = translateResponse(validated.value, {
            requestModel: request.model,
            toolNames: translated.toolNames,
            generateId: config.generateId,
          });
          yield* messageAsEvents(message);
          return;
        }
        const text = await readBody(response, context, ERROR_BODY_LIMIT).catch(() => '');
        throw protocolError(
          `the tpx endpoint answered a stream request with ${contentType || 'no content type'}, not text/event-stream: ${JSON.stringify(text.slice(0, 120))}`,
        );
      }
      const translator = new StreamTranslator({
        requestModel: request.model,
        toolNames: translated.toolNames,
        generateId: config.generateId,
      });
      yield* translator.start();
      for await (const sse of readSse(response, context)) {
        const data = sse.data.trim();
        if (sse.event === 'error') {
          const payload = data === '' ? {} : parseJsonLoose(data);
          const errorObject = (payload as { error?: unknown } | null)?.error ?? payload;
          throw mapStreamErrorObject(errorObject, 'tpx');
        }
        if (data === '') continue;
        if (data === '[DONE]') {
          yield* translator.finish(true);
          return;
        }
        const validated = validateChatCompletionChunk(parseJson(data, 'stream chunk'));
        if (!validated.ok) throw protocolError(`the tpx stream sent an invalid chunk: ${validated.message}`);
        const chunk: ChatCompletionChunk = validated.value;
        yield* translator.push(chunk);
      }
      yield* translator.finish(false);
    },

    async countTokens(request): Promise<TokenCount> {
      // No upstream call: OpenAI-compatible servers have no counting endpoint (PROTOCOLS.md D.9).
      const countText = await loadTokenCounter();
      return { input_tokens: estimateInputTokens(request, countText) };
    },

    async listModels(_options: ExchangeOptions, context, report: ReportResponse): Promise<unknown> {
      // Many OpenAI-compatible servers have no `/models`, or one that needs other rights: any failure
      // other than a cancel or the total deadline falls back to the configured model.
      try {
        const headers = { accept: 'application/json', authorization: `Bearer ${config.token()}` };
        const response = await httpRequest(`${config.baseUrl}/models`, { method: 'GET', headers }, context);
        report(response.status, pickResponseHeaders(response.headers));
        if (response.status >= 200 && response.status <= 299) {
          const mapped = mapModelList(
            parseJsonLoose(await readBody(response, context, ERROR_BODY_LIMIT * 16)),
          );
          if (mapped !== undefined) return mapped;
        } else {
          await response.body.dump();
        }
      } catch (error) {
        if (context.signal.aborted) throw error;
      }
      return fallbackModelList(config.model);
    },
  };
}

function parseJsonLoose(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { message: text };
  }
}

/** A whole message as the stream events that build it (for servers that ignore `stream: true`). */
function* messageAsEvents(message: Message): Generator<MessageStreamEvent> {
  const { content, usage, stop_reason, stop_sequence, ...rest } = message;
  yield {
    type: 'message_start',
    message: {
      ...rest,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 0 },
    },
  };
  for (let index = 0; index < content.length; index++) {
    const block = content[index]!;
    switch (block.type) {
      case 'text':
        yield { type: 'content_block_start', index, content_block: { type: 'text', text: '' } };
        yield {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: (block as { text: string }).text },
        };
        break;
      case 'thinking':
        yield {
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        };
        yield {
          type: 'content_block_delta',
          index,
          delta: { type: 'thinking_delta', thinking: (block as { thinking: string }).thinking },
        };
        break;
      case 'tool_use': {
        const toolUse = block as { id: string; name: string; input: Record<string, unknown> };
        yield {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: toolUse.id, name: toolUse.name, input: {} },
        };
        const json = JSON.stringify(toolUse.input);
        if (json !== '{}')
          yield {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: json },
          };
        break;
      }
      default:
        yield { type: 'content_block_start', index, content_block: block };
    }
    yield { type: 'content_block_stop', index };
  }
  yield { type: 'message_delta', delta: { stop_reason, stop_sequence }, usage };
  yield { type: 'message_stop' };
}
