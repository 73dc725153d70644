/**
 * The public shapes of the transport: its options, per-exchange options, and the `ModelTransport`
 * interface every provider is used through.
 *
 * @module
 */
import type { ProviderName } from '../errors.js';
import type {
  CountTokensRequest,
  Deadlines,
  ExchangeOptions,
  ResponseInfo,
  RetryInfo,
  ServerKind,
  TokenCount,
  UpstreamReport,
} from '../providers/exchange-types.js';
import type { TransportObserver } from '../providers/observer.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import type { RoutesDescription, UpstreamState } from './routes/describe-routes.js';
import type { RoutesConfig } from './routes/routes-config.js';

export type {
  CountTokensRequest,
  Deadlines,
  ExchangeOptions,
  ResponseInfo,
  RetryInfo,
  ServerKind,
  TokenCount,
  UpstreamReport,
};

/** Why the transport picked its provider. Never contains a secret. */
export interface Selection {
  readonly provider: ProviderName;
  readonly reason: string;
  /** `tpx` only: the dialect profile in use and why (`TPX_DIALECT is set`, `detected from …`). */
  readonly dialect?: { readonly name: string; readonly reason: string };
  /**
   * `tpx` only: where the bearer token comes from — `static` (`TPX_OAUTH_TOKEN`), `file`
   * (`TPX_OAUTH_TOKEN_FILE`, re-read when it changes) or `command` (`TPX_OAUTH_TOKEN_COMMAND`, run again
   * after a 401) — and the option or variable that named it. Never the value.
   */
  readonly tokenSource?: { readonly kind: 'static' | 'file' | 'command'; readonly origin: string };
  /** `tpx` only: the wire protocol (`chat` or `responses`) and why (`TPX_WIRE is set`, the dialect's default). */
  readonly wire?: { readonly name: 'chat' | 'responses'; readonly reason: string };
  /** With routes (the `routes` option, `tpx serve --config`): the upstreams and routes. No secrets. */
  readonly routes?: RoutesDescription;
}

/**
 * What `send` and `stream` accept: a `MessagesRequest`, or any object with the request's required fields
 * — such as the official SDK's `MessageCreateParams`, whose interfaces TypeScript will not widen to our
 * index-signature types. Either way the request is validated at run time before anything is sent.
 */
export type MessagesRequestInput =
  | MessagesRequest
  | { model: string; max_tokens: number; messages: readonly object[]; stream?: boolean | null };

/** The one interface callers use, whatever provider is behind it. */
export interface ModelTransport {
  /** The provider chosen at creation. Frozen. */
  readonly provider: ProviderName;
  /** The provider and a human-readable reason naming the variable or option that decided it. Frozen. */
  readonly selection: Selection;
  /** One exchange, answered with a Messages `message`. Rejects with `TransportError`. */
  send(request: MessagesRequestInput, options?: ExchangeOptions): Promise<Message>;
  /**
   * One exchange, answered as Messages stream events in protocol order. Never throws synchronously:
   * every failure surfaces from the iteration as a `TransportError`. Breaking out of the loop aborts
   * the upstream request.
   */
  stream(request: MessagesRequestInput, options?: ExchangeOptions): AsyncIterable<MessageStreamEvent>;
  /**
   * Counts a request's input tokens (`POST /v1/messages/count_tokens`). `anthropic`: Anthropic's own
   * endpoint. `tpx`: the server's own count of the prompt tpx would send where the dialect has a way to
   * ask (`llamacpp`: `/apply-template` + `/tokenize`; `vllm`: `/tokenize`), else — and when the server
   * cannot answer — a local, deliberately conservative estimate. `none`: `MODEL_EAUTH`.
   */
  countTokens?(request: CountTokensRequest, options?: ExchangeOptions): Promise<TokenCount>;
  /**
   * Lists models in the Messages list shape (`GET /v1/models`). `anthropic`: Anthropic's list, as sent.
   * `tpx`: the upstream `{base}/models` mapped to that shape, or the configured model when the upstream
   * has no list. `none`: `MODEL_EAUTH`.
   */
  listModels?(options?: ExchangeOptions): Promise<unknown>;
  /**
   * Asks the upstream what it serves: its model list (with context windows where stated) and, for
   * llama.cpp-like servers, `/props`. Rejects only when the upstream cannot be reached or refuses the
   * credentials; any other answer is described in the report. `none`: `MODEL_EAUTH`.
   */
  inspectUpstream?(options?: ExchangeOptions): Promise<UpstreamReport>;
  /** How requested models map to upstream models, and the output cap: what `tpx serve` shows at start. */
  readonly upstreamPolicy?: UpstreamPolicy;
  /**
   * With routes: asks every upstream what it serves, at once; each one's report, or the error that kept
   * it from answering (never a rejection of the whole).
   */
  inspectUpstreams?(options?: ExchangeOptions): Promise<readonly UpstreamInspection[]>;
  /** With routes: each upstream's circuit breaker, now (`closed`, `open`, `half-open`). */
  upstreamStates?(): readonly UpstreamState[];
  /** Closes pooled connections. Exchanges after `close()` fail. */
  close(): Promise<void>;
}

/** One upstream's answer to `inspectUpstreams`. */
export type UpstreamInspection =
  | { readonly name: string; readonly baseUrl: string; readonly report: UpstreamReport }
  | { readonly name: string; readonly baseUrl: string; readonly error: unknown };

/** The model mapping and output cap a transport applies, for display. */
export interface UpstreamPolicy {
  /** The upstream base URL in use (without any user name or password in it); absent for `none`. */
  readonly baseUrl?: string;
  /** The `pattern=model` rules, in order, as written. */
  readonly modelRules: readonly { readonly pattern: string; readonly model: string }[];
  /** The catch-all after the rules (`TPX_MODEL`). */
  readonly catchAllModel?: string;
  /** Whether unmapped names are checked against the upstream's model list (`inspectUpstream` option). */
  readonly usesUpstreamModelList: boolean;
  /** `TPX_MAX_TOKENS`, when set. */
  readonly maxTokens?: number;
  /** Whether the upstream's context window caps `max_tokens` (learned through `inspectUpstream`). */
  readonly capsToContextWindow: boolean;
  /**
   * Decides the upstream model for a requested name, as an exchange would (using the upstream's list
   * when known): the name and why; rejects with the 404 an exchange would get.
   */
  resolveModel(requested: string): Promise<{ model: string; reason: string }>;
}

/** Everything `createTransport` accepts. Explicit options win over the environment. */
export interface TransportOptions extends Partial<Deadlines> {
  /** The environment to read credentials from, once. @default process.env */
  env?: Record<string, string | undefined>;
  /** Static Anthropic API key (selects `anthropic`). @default env.ANTHROPIC_API_KEY */
  anthropicApiKey?: string;
  /** Anthropic base URL. @default env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com' */
  anthropicBaseUrl?: string;
  /** OAuth bearer token (selects `tpx` when no key is set). @default env.TPX_OAUTH_TOKEN */
  tpxToken?: string;
  /**
   * A file holding the OAuth token, re-read when it changes (checked at most once per exchange).
   * @default env.TPX_OAUTH_TOKEN_FILE
   */
  tpxTokenFile?: string;
  /**
   * A shell command printing the OAuth token (e.g. `gcloud auth print-access-token`), run at creation
   * and again when the upstream answers 401. @default env.TPX_OAUTH_TOKEN_COMMAND
   */
  tpxTokenCommand?: string;
  /** Time limit of one run of the token command. @default env.TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS ?? 10_000 */
  tpxTokenCommandTimeoutMs?: number;
  /**
   * The server's dialect profile: `openai`, `vllm`, `llamacpp`, `ollama`, `deepseek`, `mistral`, `kimi`,
   * `groq`, `openrouter`, `gemini`, `azure`, `vertex` or `openai-generic`.
   * @default env.TPX_DIALECT, else detected from the base URL's host, else 'openai-generic'
   */
  tpxDialect?: string;
  /** Azure OpenAI's `api-version` query parameter. @default env.TPX_AZURE_API_VERSION ?? '2024-10-21' */
  tpxAzureApiVersion?: string;
  /** The OpenAI-compatible base URL, e.g. `http://127.0.0.1:8000/v1`. @default env.TPX_BASE_URL */
  tpxBaseUrl?: string;
  /** Model name sent upstream on the `tpx` path. @default env.TPX_MODEL, else the request's `model` */
  tpxModel?: string;
  /**
   * The wire protocol of the `tpx` provider: `chat` (Chat Completions, `{base}/chat/completions`) or
   * `responses` (the OpenAI Responses API, `{base}/responses`).
   * @default env.TPX_WIRE, else the dialect's default (`chat` for every dialect today)
   */
  tpxWire?: string;
  /**
   * Read tool calls a model wrote as text (`<tool_call>{…}</tool_call>`, `[TOOL_CALLS][…]`, a bare
   * `{"name", "arguments"}` answer) as `tool_use` blocks when the request offered tools.
   * @default env.TPX_TEXT_TOOL_CALLS (`on`/`off`), else the dialect's default: on for `vllm`, `llamacpp`,
   * `ollama` and `openai-generic`, off for hosted services
   */
  tpxTextToolCalls?: boolean;
  /**
   * Model mapping: `pattern=upstream-model` rules, comma-separated, globs on the requested model, first
   * match wins (`'*haiku*=qwen3-4b,*=qwen3-32b'`); `tpxModel` / `TPX_MODEL` is the catch-all. Applies to
   * both providers. @default env.TPX_MODEL_MAP
   */
  modelMap?: string;
  /** Cap on the `max_tokens` sent upstream. @default env.TPX_MAX_TOKENS */
  maxOutputTokens?: number;
  /**
   * Betas left out of the caller's `anthropic-beta` header on the native (`anthropic`) path, for
   * Messages-compatible upstreams that refuse a beta they do not know; every other beta passes as sent.
   * @default env.TPX_DROP_BETAS (comma-separated), else none
   */
  dropBetas?: readonly string[];
  /**
   * Ask the upstream (once, cached) for its model list and context window: unmapped model names the
   * upstream does not serve then map to its only model, or are refused with a 404 listing what it
   * serves, and `max_tokens` is capped to fit the context window. `tpx serve` and `tpx claude` turn it
   * on. @default false
   */
  inspectUpstream?: boolean;
  /**
   * Several upstreams behind the `tpx` provider, and the routes that pick one per exchange (see
   * docs/routes.md): checked when the transport is created (`MODEL_ECONFIG` naming the key at fault).
   * When given, the credential options and variables are not read: each upstream names its own.
   * @default undefined (one upstream, from the options and variables above)
   */
  routes?: RoutesConfig;
  /** How configuration errors name where the routes came from, e.g. the file. @default 'the routes option' */
  routesSource?: string;
  /** Headers added to every upstream request (`tpx serve` sends its hop header for loop detection). */
  upstreamHeaders?: Record<string, string>;
  /** Default retry count. @default 2 */
  maxRetries?: number;
  /** Largest response body (or whole stream) accepted, in bytes. @default 64 MiB */
  maxResponseBytes?: number;
  /** `fetch`-free injection point for tests: random source for backoff jitter. @default Math.random */
  random?: () => number;
  /** Injection point for tests: sleeps between retries. @default a timer honouring the abort signal */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Injection point for tests: the clock of the routes' circuit breakers, in ms. @default Date.now */
  now?: () => number;
  /** Injection point for tests: fresh ids for generated message and tool ids. @default crypto-random */
  generateId?: () => string;
  /** Sees token refreshes (metrics); see `providers/observer.ts`. @default undefined */
  observer?: TransportObserver;
}
