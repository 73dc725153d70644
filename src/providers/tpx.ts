/**
 * The `tpx` provider: an OpenAI-compatible server behind the Messages protocol. This is its shell — the
 * token, the context edits, count_tokens, the model list and the upstream's inspection — and it picks
 * the wire an exchange goes over: Chat Completions (`tpx-chat-wire.ts`) or the Responses API
 * (`tpx-responses-wire.ts`).
 *
 * A 401 from the upstream makes the token source refresh once per exchange and the request is sent again
 * with the new token (`send-with-bearer.ts`); a second 401, or a source with nothing new, ends the
 * exchange with `MODEL_EAUTH` (401). Messages never contain a token value.
 *
 * @module
 */
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import { DIALECTS, modelsUrl, type DialectProfile } from '../translate/dialects.js';
import type { TranslateRequestOptions } from '../translate/translate-request.js';
import { applyEdits, reportEdits, withAppliedEdits } from './apply-edits.js';
import { countTpxTokens } from './count-tpx-tokens.js';
import { estimateStreamInputTokens } from './estimate-stream-input-tokens.js';
import type { ExchangeOptions, UpstreamReport } from './exchange-types.js';
import type { AttemptContext } from './http-exchange.js';
import { inspectOpenAiUpstream, propsUrlFor } from './inspect-upstream.js';
import { listTpxModels } from './list-tpx-models.js';
import type { Provider, ReportResponse } from './provider.js';
import { bearerPoster, bearerSender, type PostJson } from './send-with-bearer.js';
import { chatEndpoint, sendOverChat, streamOverChat, type ChatWireConfig } from './tpx-chat-wire.js';
import { sendOverResponses, streamOverResponses, type ResponsesWireConfig } from './tpx-responses-wire.js';
import type { TokenSource } from './token-source.js';
import { checkBetasForTranslation } from '../translate/anthropic-betas.js';

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
  /** Read tool calls written as text as calls. @default the dialect's `readsTextToolCalls` */
  textToolCalls?: boolean;
}

/** The OpenAI-compatible protocols the `tpx` provider speaks. */
export type TpxWire = 'chat' | 'responses';

/** What either wire reads of the configuration. */
type WireConfig = ChatWireConfig & ResponsesWireConfig;

/** How one attempt of an exchange goes over a wire; both wires share the bearer-token POST. */
interface Wire {
  send(
    request: MessagesRequest,
    config: WireConfig,
    attempt: AttemptContext,
    post: PostJson,
  ): Promise<Message>;
  stream(
    request: MessagesRequest,
    config: WireConfig,
    attempt: AttemptContext,
    post: PostJson,
    estimateInputTokens: (request: MessagesRequest) => Promise<number | undefined>,
  ): AsyncGenerator<MessageStreamEvent[]>;
}

const WIRES: Readonly<Record<TpxWire, Wire>> = {
  chat: { send: sendOverChat, stream: streamOverChat },
  responses: { send: sendOverResponses, stream: streamOverResponses },
};

/** Creates the OpenAI-compatible provider. */
export function createTpxProvider(config: TpxConfig): Provider {
  const wireConfig: WireConfig = {
    baseUrl: config.baseUrl,
    model: config.model,
    generateId: config.generateId,
    dialect: config.dialect ?? DIALECTS['openai-generic'],
    azureApiVersion: config.azureApiVersion,
    maxTokensField: config.maxTokensField,
    textToolCalls: config.textToolCalls ?? (config.dialect ?? DIALECTS['openai-generic']).readsTextToolCalls,
  };
  const wire = WIRES[config.wire ?? 'chat'];
  const { tokens } = config;
  const posterFor = (context: AttemptContext, report: ReportResponse): PostJson =>
    bearerPoster(bearerSender(tokens, context, report), context);

  return {
    name: 'tpx',

    async send(original, options: ExchangeOptions, context, report: ReportResponse): Promise<Message> {
      checkBetas(options);
      const edits = await applyEdits(original);
      const message = await wire.send(edits.request, wireConfig, context, posterFor(context, report));
      return withAppliedEdits(message, edits);
    },

    async *stream(original, options: ExchangeOptions, context, report): AsyncGenerator<MessageStreamEvent[]> {
      checkBetas(options);
      const edits = await applyEdits(original);
      const post = posterFor(context, report);
      const batches = wire.stream(edits.request, wireConfig, context, post, estimateStreamInputTokens);
      for await (const batch of batches) yield reportEdits(batch, edits);
    },

    countTokens(request, _options: ExchangeOptions, context, report) {
      return countTpxTokens(request, wireConfig, bearerSender(tokens, context, report), context);
    },

    listModels(_options: ExchangeOptions, context, report: ReportResponse): Promise<unknown> {
      return listTpxModels(wireConfig, config.model, bearerSender(tokens, context, report), context);
    },

    inspect(_options: ExchangeOptions, context, report: ReportResponse, detail): Promise<UpstreamReport> {
      const send = bearerSender(tokens, context, report);
      const get = (url: string) => send(url, { method: 'GET', headers: { accept: 'application/json' } });
      const { dialect } = wireConfig;
      // llama.cpp states its running context size only in /props; servers known to be others have none.
      const asksProps = dialect.name === 'llamacpp' || dialect.name === 'openai-generic';
      return inspectOpenAiUpstream(get, context, {
        modelsUrl: modelsUrl(dialect, chatEndpoint(wireConfig, config.model ?? '')),
        propsUrl: asksProps && dialect.endpoint === 'base' ? propsUrlFor(config.baseUrl) : undefined,
        // With no dialect named, ask what the server is, so that the doctor and start-up can say.
        detectServer:
          detail?.detectServer === true && dialect.name === 'openai-generic' && dialect.endpoint === 'base',
      });
    },
  };
}

/**
 * Refuses, before anything is sent, a caller's `anthropic-beta` that names a feature only Anthropic's
 * servers run (`checkBetasForTranslation`); the other betas have nothing to send on this path.
 */
function checkBetas(options: ExchangeOptions): void {
  const headers = options.headers;
  if (headers === undefined) return;
  for (const name in headers) {
    if (name.toLowerCase() === 'anthropic-beta') checkBetasForTranslation(headers[name]);
  }
}
