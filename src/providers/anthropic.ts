/**
 * The `anthropic` provider: the Messages body goes out natively to `{base}/v1/messages`
 * (`anthropic-request.ts`), the answer is validated — the whole message (`anthropic-answer.ts`), or each
 * stream event and the stream's grammar (`anthropic-stream-checks.ts`) — and handed back.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { Message, MessageStreamEvent } from '../protocol/messages.js';
import { stringifyExactJson } from '../protocol/exact-json.js';
import { mapModelList, modelList } from '../translate/map-model-list.js';
import { translateStream } from '../translate/translate-stream.js';
import { readMessage } from './anthropic-answer.js';
import {
  anthropicHeaders,
  anthropicUrl,
  failOnStatus,
  postMessages,
  sendReported,
  type AnthropicConfig,
} from './anthropic-request.js';
import { AnthropicStreamChecks } from './anthropic-stream-checks.js';
import type { CountTokensRequest, ExchangeOptions, TokenCount, UpstreamReport } from './exchange-types.js';
import { readBody, type AttemptContext } from './http-exchange.js';
import { inspectOpenAiUpstream } from './inspect-upstream.js';
import { isEventStream } from './media-type.js';
import type { Provider, ReportResponse } from './provider.js';
import { readSse } from './read-sse.js';
import { notAnEventStream, parseUpstreamJson } from './upstream-answer.js';

export type { AnthropicConfig };

/** Creates the native provider for one key and base URL. */
export function createAnthropicProvider(config: AnthropicConfig): Provider {
  return {
    name: 'anthropic',

    async send(request, options, context, report: ReportResponse): Promise<Message> {
      const response = await postMessages(config, request, options, false, context, report);
      return readMessage(response, context);
    },

    async *stream(request, options, context, report: ReportResponse): AsyncGenerator<MessageStreamEvent[]> {
      const response = await postMessages(config, request, options, true, context, report);
      const contentType = response.headers['content-type'] ?? '';
      if (!isEventStream(contentType))
        throw await notAnEventStream(response, context, contentType, 'anthropic');
      yield* translateStream(readSse(response, context), new AnthropicStreamChecks());
    },

    countTokens(request, options, context, report: ReportResponse): Promise<TokenCount> {
      return countTokens(config, request, options, context, report);
    },

    listModels(options, context, report: ReportResponse): Promise<unknown> {
      return listModels(config, options, context, report);
    },

    inspect(options, context, report: ReportResponse): Promise<UpstreamReport> {
      const headers = getHeaders(config, options);
      const get = async (url: string) => {
        const response = await sendReported(url, { method: 'GET', headers }, context, report);
        // A refused key is an answer about the credentials, not about the list.
        if (response.status === 401) await failOnStatus(response, context);
        return response;
      };
      return inspectOpenAiUpstream(get, context, {
        modelsUrl: anthropicUrl(config.baseUrl, undefined, '/v1/models'),
      });
    },
  };
}

/** The headers of a GET: a request's, without a content type. */
function getHeaders(config: AnthropicConfig, options: ExchangeOptions): Record<string, string> {
  const headers = anthropicHeaders(config, options, false);
  delete headers['content-type'];
  return headers;
}

/** Anthropic's own count of the request's input tokens (`/v1/messages/count_tokens`). */
async function countTokens(
  config: AnthropicConfig,
  request: CountTokensRequest,
  options: ExchangeOptions,
  context: AttemptContext,
  report: ReportResponse,
): Promise<TokenCount> {
  const url = anthropicUrl(config.baseUrl, options.query, '/v1/messages/count_tokens');
  const headers = anthropicHeaders(config, options, false);
  const body = options.rawBody ?? stringifyExactJson(request);
  const response = await sendReported(url, { method: 'POST', headers, body }, context, report);
  if (response.status < 200 || response.status > 299) await failOnStatus(response, context);
  const payload = parseUpstreamJson(await readBody(response, context), 'count_tokens response', 'anthropic');
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
}

/** The models the key may use (`/v1/models`), in the Messages list shape. */
async function listModels(
  config: AnthropicConfig,
  options: ExchangeOptions,
  context: AttemptContext,
  report: ReportResponse,
): Promise<unknown> {
  const headers = getHeaders(config, options);
  const url = anthropicUrl(config.baseUrl, options.query, '/v1/models');
  const response = await sendReported(url, { method: 'GET', headers }, context, report);
  if (response.status < 200 || response.status > 299) await failOnStatus(response, context);
  const payload = parseUpstreamJson(await readBody(response, context), 'models response', 'anthropic');
  if (!Array.isArray((payload as { data?: unknown } | null)?.data)) {
    throw new TransportError('MODEL_EPROTO', 'the anthropic models response has no data array', {
      provider: 'anthropic',
    });
  }
  return asMessagesModelList(payload as { data: unknown[] });
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
