/**
 * The `tpx` provider: the Messages request is translated to Chat Completions, shaped for the server's
 * dialect (`translate/dialects.ts`), sent with the OAuth bearer token to the dialect's endpoint
 * (`{base}/chat/completions`, Azure's deployment route, Vertex's `…/endpoints/openapi`), and the answer —
 * JSON or a stream — normalized for the dialect and translated back.
 *
 * A 401 from the upstream makes the token source refresh once per exchange (re-read the token file, run
 * the token command) and the request is sent again with the new token; a second 401, or a source with
 * nothing new, ends the exchange with `MODEL_EAUTH` (401). Messages never contain a token value.
 *
 * @module
 */
import { TransportError, isTransportError } from '../errors.js';
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
import {
  DIALECTS,
  chatCompletionsUrl,
  modelsUrl,
  type DialectProfile,
  type EndpointOptions,
} from '../translate/dialects.js';
import {
  applyContextEdits,
  needsTokenCounter,
  type ContextEditOutcome,
} from '../translate/apply-context-edits.js';
import type { CountTextTokens } from '../translate/estimate-input-tokens.js';
import { loadTokenCounter } from './load-token-counter.js';
import { fallbackModelList, mapModelList } from '../translate/map-model-list.js';
import { mapStreamErrorObject } from '../translate/map-stream-error-object.js';
import {
  applyTemplateBody,
  llamaCppTokenizeBody,
  readTemplatedPrompt,
  readTokenListLength,
  readVllmTokenCount,
  serverRootUrl,
  vllmTokenizeBody,
} from '../translate/server-token-count.js';
import { translateRequest, type TranslateRequestOptions } from '../translate/translate-request.js';
import { translateResponse } from '../translate/translate-response.js';
import { StreamTranslator } from '../translate/stream-translator.js';
import type { TokenSource } from './token-source.js';
import type { CountTokensRequest, ExchangeOptions, TokenCount, UpstreamReport } from './exchange-types.js';
import { pickResponseHeaders } from '../translate/pick-response-headers.js';
import { httpRequest, readBody, type AttemptContext, type HttpResponse } from './http-exchange.js';
import { noteUpstreamModel } from './attempt-notes.js';
import { MAX_RUN_CHARS, SLICE_CHARS, estimateInputTokensInSlices } from './estimate-tokens-in-slices.js';
import { explainUpstreamError } from './explain-upstream-error.js';
import { isEventStream, isJson } from './media-type.js';
import { inspectOpenAiUpstream, propsUrlFor } from './inspect-upstream.js';
import { messageAsEvents } from './message-as-events.js';
import { appendEvents, type Provider, type ReportResponse } from './provider.js';
import { readSse } from './read-sse.js';
import { sendOverResponses, streamOverResponses, type PostJson } from './tpx-responses-wire.js';
import { ERROR_BODY_LIMIT, parseUpstreamJson, upstreamError } from './upstream-answer.js';
import { stringifyExactJson } from '../protocol/exact-json.js';

export interface TpxConfig {
  /** Where the bearer token comes from; it may be refreshed from the same source after a 401. */
  tokens: TokenSource;
  baseUrl: string;
  model: string | undefined;
  generateId: () => string;
  /** The server's dialect profile. @default DIALECTS['openai-generic'] */
  dialect?: DialectProfile;
  /** Azure's `api-version`. @default DEFAULT_AZURE_API_VERSION */
  azureApiVersion?: string;
  /** Overrides the dialect's max-tokens field. @default the dialect's */
  maxTokensField?: TranslateRequestOptions['maxTokensField'];
  /**
   * The wire protocol: Chat Completions (`{base}/chat/completions`, shaped by the dialect) or the OpenAI
   * Responses API (`{base}/responses`, see `tpx-responses-wire.ts`). @default 'chat'
   */
  wire?: TpxWire;
}

/** The OpenAI-compatible protocols the `tpx` provider speaks. */
export type TpxWire = 'chat' | 'responses';

function protocolError(message: string): TransportError {
  return new TransportError('MODEL_EPROTO', message, { provider: 'tpx' });
}

function parseJson(text: string, what: string): unknown {
  return parseUpstreamJson(text, what, 'tpx');
}

async function failOnStatus(
  response: HttpResponse,
  context: AttemptContext,
  call: { url: string; model?: string },
): Promise<never> {
  const error = await upstreamError(response, context, 'tpx');
  throw explainUpstreamError(error, { method: 'POST', ...call, baseUrlVariable: 'TPX_BASE_URL' });
}

/** Creates the OpenAI-compatible provider. */
export function createTpxProvider(config: TpxConfig): Provider {
  const dialect = config.dialect ?? DIALECTS['openai-generic'];
  const wire = config.wire ?? 'chat';
  const { tokens } = config;

  function endpoint(model: string): EndpointOptions {
    const options: EndpointOptions = { baseUrl: config.baseUrl, model };
    if (config.azureApiVersion !== undefined) options.azureApiVersion = config.azureApiVersion;
    return options;
  }

  function prepare(request: MessagesRequest, streaming: boolean) {
    const options: TranslateRequestOptions = {};
    // The transport's model mapping has already put the upstream model (TPX_MODEL among its rules) here.
    const model = request.model;
    options.model = model;
    options.maxTokensField = config.maxTokensField ?? dialect.maxTokensField;
    options.dialect = dialect;
    const translated = translateRequest({ ...request, stream: streaming }, options);
    const body = applyDialectToRequest(dialect, translated.body);
    const headers = {
      'content-type': 'application/json',
      accept: streaming ? 'text/event-stream' : 'application/json',
    };
    return { translated, body, headers, url: chatCompletionsUrl(dialect, endpoint(model)) };
  }

  /**
   * Sends one request with the current token. On a 401 the token source refreshes (once per exchange:
   * the exchange's signal identifies it) and the request goes out again with the new token.
   *
   * @throws TransportError `MODEL_EAUTH` (401) when the upstream refused the token and there is no new one.
   */
  async function sendAuthorized(
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
    context: AttemptContext,
    report: ReportResponse,
  ): Promise<HttpResponse> {
    const exchange = context.cancellation;
    let token = await tokens.token(exchange);
    for (let sent = 1; ; sent++) {
      const headers = { ...init.headers, authorization: `Bearer ${token}` };
      const response = await httpRequest(url, { ...init, headers }, context);
      report(response.status, pickResponseHeaders(response.headers));
      if (response.status !== 401) return response;
      const refused = await upstreamError(response, context, 'tpx');
      let fresh: string | undefined;
      if (sent === 1) {
        try {
          fresh = await tokens.refresh(exchange, token, exchange.signal);
        } catch (error) {
          if (exchange.aborted && isTransportError(exchange.reason)) throw exchange.reason;
          throw error;
        }
      }
      if (fresh === undefined) throw refusedToken(refused, sent);
      token = fresh;
    }
  }

  function refusedToken(refused: TransportError, sent: number): TransportError {
    const retried = sent > 1 ? ', also after the token was refreshed' : '';
    return new TransportError(
      'MODEL_EAUTH',
      tokens.redact(
        `the tpx endpoint refused the bearer token from ${tokens.origin}${retried}: ${refused.message}`,
      ),
      {
        status: 401,
        type: 'authentication_error',
        provider: 'tpx',
        headers: { ...refused.headers },
        ...(refused.requestId === undefined ? {} : { requestId: refused.requestId }),
      },
    );
  }

  /** A POST with the bearer token for the Responses wire; an error status is thrown, mapped. */
  function poster(context: AttemptContext, report: ReportResponse): PostJson {
    return async (url, body, streaming) => {
      const headers = {
        'content-type': 'application/json',
        accept: streaming ? 'text/event-stream' : 'application/json',
      };
      const response = await sendAuthorized(url, { method: 'POST', headers, body }, context, report);
      if (response.status < 200 || response.status > 299) await failOnStatus(response, context, { url });
      return response;
    };
  }

  /**
   * A whole JSON answer, translated: the `send` path, and streams from servers that ignore
   * `stream: true`. A 200 body holding only an error object is that error.
   */
  async function readJsonAnswer(
    response: HttpResponse,
    context: AttemptContext,
    request: MessagesRequest,
    toolNames: ReturnType<typeof prepare>['translated']['toolNames'],
  ): Promise<Message> {
    const payload = parseJson(await readBody(response, context), 'response');
    if (typeof payload === 'object' && payload !== null && 'error' in payload && !('choices' in payload)) {
      throw mapStreamErrorObject(payload.error, 'tpx');
    }
    const validated = validateChatCompletionResponse(payload);
    if (!validated.ok) {
      throw protocolError(`the tpx response is not a valid chat completion: ${validated.message}`);
    }
    return translateResponse(normalizeResponse(dialect, validated.value), {
      requestModel: request.model,
      toolNames,
      generateId: config.generateId,
    });
  }

  /** POSTs JSON to a counting route; the parsed answer, or `undefined` when the route gave none. */
  async function postForCount(
    url: string,
    body: Record<string, unknown>,
    context: AttemptContext,
    report: ReportResponse,
  ): Promise<unknown> {
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    const response = await sendAuthorized(
      url,
      { method: 'POST', headers, body: stringifyExactJson(body) },
      context,
      report,
    );
    if (response.status < 200 || response.status > 299) {
      response.body.destroy();
      return undefined;
    }
    return parseJsonLoose(await readBody(response, context, ERROR_BODY_LIMIT * 16));
  }

  /**
   * The server's own count of the prompt tpx would send for `request` (see `server-token-count.ts`), or
   * `undefined` when the server has no such route or answers something else: the caller then estimates.
   * A refused token, an unreachable server or a deadline is an answer in itself and is thrown.
   */
  async function countOnServer(
    request: CountTokensRequest,
    context: AttemptContext,
    report: ReportResponse,
  ): Promise<number | undefined> {
    // count_tokens requests carry no max_tokens; the translator needs one, and it changes no prompt token.
    const { body } = prepare({ ...request, max_tokens: 1 } as MessagesRequest, false);
    const root = serverRootUrl(config.baseUrl);
    try {
      if (dialect.tokenCounting === 'vllm') {
        return readVllmTokenCount(
          await postForCount(`${root}/tokenize`, vllmTokenizeBody(body), context, report),
        );
      }
      const prompt = readTemplatedPrompt(
        await postForCount(`${root}/apply-template`, applyTemplateBody(body), context, report),
      );
      if (prompt === undefined) return undefined;
      return readTokenListLength(
        await postForCount(`${root}/tokenize`, llamaCppTokenizeBody(prompt), context, report),
      );
    } catch (error) {
      if (context.cancellation.aborted) throw error;
      if (
        isTransportError(error) &&
        (error.code === 'MODEL_EAUTH' || error.code === 'MODEL_ETRANSPORT' || error.code === 'MODEL_ETIMEOUT')
      ) {
        throw error;
      }
      return undefined;
    }
  }

  return {
    name: 'tpx',

    async send(original, _options: ExchangeOptions, context, report: ReportResponse): Promise<Message> {
      const edits = await applyEdits(original);
      const { request } = edits;
      if (wire === 'responses') {
        return withAppliedEdits(
          await sendOverResponses(request, config, context, poster(context, report)),
          edits,
        );
      }
      const { translated, body, headers, url } = prepare(request, false);
      noteUpstreamModel(context.notes, body.model);
      const response = await sendAuthorized(
        url,
        { method: 'POST', headers, body: stringifyExactJson(body) },
        context,
        report,
      );
      if (response.status < 200 || response.status > 299)
        await failOnStatus(response, context, { url, model: request.model });
      return withAppliedEdits(await readJsonAnswer(response, context, request, translated.toolNames), edits);
    },

    async *stream(
      original,
      _options: ExchangeOptions,
      context,
      report: ReportResponse,
    ): AsyncGenerator<MessageStreamEvent[]> {
      const edits = await applyEdits(original);
      const { request } = edits;
      if (wire === 'responses') {
        for await (const batch of streamOverResponses(
          request,
          config,
          context,
          poster(context, report),
          estimateStreamInputTokens,
        )) {
          yield reportEdits(batch, edits);
        }
        return;
      }
      const { translated, body, headers, url } = prepare(request, true);
      noteUpstreamModel(context.notes, body.model);
      const sent = sendAuthorized(
        url,
        { method: 'POST', headers, body: stringifyExactJson(body) },
        context,
        report,
      );
      // The estimate is computed while the upstream works on its first byte; a failure of the request in
      // the meantime is handled by the `await` below, not reported as unhandled.
      sent.catch(() => undefined);
      const inputTokensEstimate = await estimateStreamInputTokens(request);
      const response = await sent;
      if (response.status < 200 || response.status > 299)
        await failOnStatus(response, context, { url, model: request.model });
      const contentType = response.headers['content-type'] ?? '';
      if (!isEventStream(contentType)) {
        // Some servers ignore `stream: true` and answer JSON; translate that answer as a stream.
        if (isJson(contentType)) {
          const message = await readJsonAnswer(response, context, request, translated.toolNames);
          yield reportEdits([...messageAsEvents(message)], edits);
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
        inputTokensEstimate,
      });
      const normalize = createChunkNormalizer(dialect);
      // message_start waits for the first valid upstream chunk: an upstream whose very first chunk is an
      // error then fails the attempt before anything reached the caller, so it can still be retried, or
      // answered by the proxy with a proper HTTP status. A pass-through waits for that chunk too.
      let pendingStart: MessageStreamEvent[] | undefined = translator.start();
      const append = (batch: MessageStreamEvent[], events: MessageStreamEvent[]): void => {
        if (pendingStart !== undefined) {
          appendEvents(batch, pendingStart);
          pendingStart = undefined;
        }
        appendEvents(batch, events);
      };
      for await (const messages of readSse(response, context)) {
        const batch: MessageStreamEvent[] = [];
        let finished = false;
        try {
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
              finished = true;
              break;
            }
            const chunk = parseJson(data, 'stream chunk');
            if (isPing(chunk)) continue;
            const validated = validateChatCompletionChunk(chunk);
            if (!validated.ok) {
              throw protocolError(`the tpx stream sent an invalid chunk: ${validated.message}`);
            }
            append(batch, translator.push(normalize(validated.value)));
          }
          if (finished) append(batch, translator.finish(true));
        } catch (error) {
          // What the chunk produced before the failure is delivered first, as an unbatched stream would.
          if (batch.length > 0) yield reportEdits(batch, edits);
          throw error;
        }
        if (batch.length > 0) yield reportEdits(batch, edits);
        if (finished) return;
      }
      // `finish` ends every stream it accepts with message_delta and message_stop, so this batch is never empty.
      const last: MessageStreamEvent[] = [];
      append(last, translator.finish(false));
      yield reportEdits(last, edits);
    },

    async countTokens(request, _options: ExchangeOptions, context, report): Promise<TokenCount> {
      if (dialect.tokenCounting !== 'estimate') {
        const counted = await countOnServer(request, context, report);
        if (counted !== undefined) return { input_tokens: counted };
      }
      // Most OpenAI-compatible servers have no counting endpoint (PROTOCOLS.md D.9).
      const countText = await loadTokenCounter();
      // Counted in slices with the loop given back in between: one request must not freeze the others.
      return { input_tokens: await estimateInputTokensInSlices(request, countText) };
    },

    async listModels(_options: ExchangeOptions, context, report: ReportResponse): Promise<unknown> {
      // Many OpenAI-compatible servers have no `/models`, or one that needs other rights: an error answer
      // or an unintelligible list falls back to the configured model.
      try {
        const headers = { accept: 'application/json' };
        const url = modelsUrl(dialect, endpoint(config.model ?? ''));
        const response = await sendAuthorized(url, { method: 'GET', headers }, context, report);
        if (response.status >= 200 && response.status <= 299) {
          const mapped = mapModelList(
            parseJsonLoose(await readBody(response, context, ERROR_BODY_LIMIT * 16)),
          );
          if (mapped !== undefined) return mapped;
        } else {
          response.body.destroy();
        }
      } catch (error) {
        if (context.cancellation.aborted) throw error;
        // A refused token or an endpoint that cannot be reached is an answer in itself, not a reason
        // to pretend: only a server without a usable `/models` route falls back.
        if (
          isTransportError(error) &&
          (error.code === 'MODEL_EAUTH' ||
            error.code === 'MODEL_ETRANSPORT' ||
            error.code === 'MODEL_ETIMEOUT')
        ) {
          throw error;
        }
      }
      return fallbackModelList(config.model);
    },

    inspect(_options: ExchangeOptions, context, report: ReportResponse): Promise<UpstreamReport> {
      const headers = { accept: 'application/json' };
      const get = (url: string) => sendAuthorized(url, { method: 'GET', headers }, context, report);
      // llama.cpp states its running context size only in /props; servers known to be others have none.
      const asksProps = dialect.name === 'llamacpp' || dialect.name === 'openai-generic';
      return inspectOpenAiUpstream(get, context, {
        modelsUrl: modelsUrl(dialect, endpoint(config.model ?? '')),
        propsUrl: asksProps && dialect.endpoint === 'base' ? propsUrlFor(config.baseUrl) : undefined,
      });
    },
  };
}

/**
 * Applies the request's context edits (`apply-context-edits.ts`) before translation. What an edit clears
 * is counted (each applied edit reports its `cleared_input_tokens`), in slices with long runs broken, so
 * its cost stays linear; only tool-use clearing also needs the request's own count, for its trigger, and
 * that goes through the sliced estimate (the loop is given back while counting).
 */
async function applyEdits(request: MessagesRequest): Promise<ContextEditOutcome> {
  if (request['context_management'] === undefined || request['context_management'] === null) {
    return { request, appliedEdits: undefined };
  }
  const countText = await loadTokenCounter();
  const options = needsTokenCounter(request)
    ? { inputTokens: await estimateInputTokensInSlices(request, countText) }
    : {};
  return applyContextEdits(request, countLinearly(countText), options);
}

/** A counter whose cost stays linear on hostile text: slices, and runs without spaces broken. */
function countLinearly(countText: CountTextTokens): CountTextTokens {
  const longRun = new RegExp(`(\\S{${MAX_RUN_CHARS}})(?=\\S)`, 'g');
  return (text) => {
    let tokens = 0;
    for (let start = 0; start < text.length; start += SLICE_CHARS) {
      tokens += countText(text.slice(start, start + SLICE_CHARS).replace(longRun, '$1 '));
    }
    return tokens;
  };
}

/** Reports the applied context edits on the message, as Anthropic does. */
function withAppliedEdits(message: Message, edits: ContextEditOutcome): Message {
  if (edits.appliedEdits === undefined) return message;
  return { ...message, context_management: { applied_edits: edits.appliedEdits } };
}

/** Reports the applied context edits on `message_delta`, where Anthropic's streams carry them. */
function reportEdits(events: MessageStreamEvent[], edits: ContextEditOutcome): MessageStreamEvent[] {
  const appliedEdits = edits.appliedEdits;
  if (appliedEdits === undefined) return events;
  return events.map((event) =>
    event.type === 'message_delta'
      ? { ...event, context_management: { applied_edits: appliedEdits } }
      : event,
  );
}

/**
 * The `message_start.usage.input_tokens` of a translated stream: the upstream reports its count only at
 * the end, and clients that read only `message_start` (LangChain) would otherwise see 0. The same
 * conservative estimate as `count_tokens`; `message_delta` carries the upstream's own figure. When the
 * tokenizer cannot be loaded the stream still goes on, with 0.
 */
async function estimateStreamInputTokens(request: MessagesRequest): Promise<number | undefined> {
  try {
    return await estimateInputTokensInSlices(request, await loadTokenCounter());
  } catch {
    return undefined;
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

function parseJsonLoose(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { message: text };
  }
}
