/**
 * Dialect profiles: the small, declarative differences between "OpenAI-compatible" servers that the
 * common translator does not paper over by itself (docs/protocol.md Part C). Pure data and small pure
 * functions: no I/O, no environment.
 *
 * A profile never forks the translator. It says which optional fields a server accepts (strict servers
 * answer 400 or 422 to a field they do not know), which field carries the token limit, how reasoning is
 * asked for and replayed, which tool-call ids the server accepts, which stream quirks need undoing, and
 * where the endpoint lives. `apply-dialect.ts` applies a profile around the translator.
 *
 * | dialect          | max tokens              | stream_options | parallel_tool_calls | reasoning          | user | replays reasoning_content | other |
 * |------------------|-------------------------|----------------|---------------------|--------------------|------|---------------------------|-------|
 * | `openai`         | `max_completion_tokens` | yes            | yes                 | `reasoning_effort` | yes  | never                     | |
 * | `azure`          | `max_completion_tokens` | yes            | yes                 | `reasoning_effort` | yes  | never                     | deployment URL, `api-version` |
 * | `vllm`           | `max_tokens`            | yes            | yes                 | `reasoning_effort` | yes  | on tool turns             | |
 * | `llamacpp`       | `max_tokens`            | yes            | yes                 | —                  | —    | on tool turns             | |
 * | `ollama`         | `max_tokens`            | yes            | —                   | `reasoning_effort` | —    | never                     | whole calls on index 0 split apart |
 * | `deepseek`       | `max_tokens`            | yes            | —                   | `reasoning_effort` | —    | on tool turns             | |
 * | `mistral`        | `max_tokens`            | —              | yes                 | —                  | —    | never                     | 9-character tool-call ids |
 * | `kimi`           | `max_tokens`            | yes            | —                   | —                  | —    | on tool turns             | usage inside `choices[0]` lifted |
 * | `groq`           | `max_tokens`            | yes            | yes                 | `reasoning_effort` | yes  | never                     | |
 * | `openrouter`     | `max_tokens`            | yes            | yes                 | `reasoning:{effort}` | yes | never                    | |
 * | `gemini`         | `max_tokens`            | yes            | —                   | `reasoning_effort` | —    | never                     | thought signatures echoed; whole calls on index 0 split apart; tool schemas cut to Google's subset |
 * | `vertex`         | `max_tokens`            | yes            | —                   | `reasoning_effort` | —    | never                     | as `gemini`; `…/endpoints/openapi` URL |
 * | `openai-generic` | `max_tokens`            | yes            | yes                 | `reasoning_effort` | yes  | always                    | the translator's output, system messages folded |
 *
 * `vllm`, `llamacpp`, `ollama` and `openai-generic` also fold system messages after the first (their
 * servers run open-model chat templates, many of which refuse them); the others send them in place. The
 * same four read tool calls a model wrote as text (`<tool_call>{…}</tool_call>` and the like; see
 * `text-tool-calls.ts` and `DialectProfile.readsTextToolCalls`); the hosted services parse calls themselves. See
 * `DialectProfile.systemMessages`. `count_tokens` asks the server on `llamacpp` and `vllm`, and estimates
 * locally on the others (`DialectProfile.tokenCounting`). Tool input schemas are sent as the caller wrote
 * them, except to `gemini` and `vertex`, whose function declarations take only an OpenAPI 3.0 subset
 * (`DialectProfile.toolSchemas`, `clean-tool-schema.ts`).
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { ToolSchemaStyle } from './clean-tool-schema.js';

/** Every dialect name `TPX_DIALECT` accepts, in the order they are listed to users. */
export const DIALECT_NAMES = [
  'openai',
  'vllm',
  'llamacpp',
  'ollama',
  'deepseek',
  'mistral',
  'kimi',
  'groq',
  'openrouter',
  'gemini',
  'azure',
  'vertex',
  'openai-generic',
] as const;

/** A dialect profile's name. */
export type DialectName = (typeof DIALECT_NAMES)[number];

/**
 * Which assistant messages keep the `reasoning_content` the translator builds from `thinking` blocks:
 * `all` (every assistant message), `tool-turns` (only assistant messages with tool calls: DeepSeek and
 * Kimi reject a tool turn without its reasoning and ignore reasoning elsewhere), or `none` (strict servers
 * answer 400 to the unknown property, e.g. Groq's "property 'reasoning_content' is unsupported").
 */
export type ReasoningReplay = 'all' | 'tool-turns' | 'none';

/**
 * How a requested reasoning effort reaches the server: the `reasoning_effort` field, OpenRouter's
 * `reasoning: {effort}` object, or not at all (the server decides).
 */
export type ReasoningRequest = 'reasoning_effort' | 'reasoning-object' | 'none';

/**
 * Where the Chat Completions endpoint lives: `{base}/chat/completions`, Azure's deployment route with
 * an `api-version` query, or Vertex AI's OpenAI-compatible endpoint (`…/endpoints/openapi/chat/completions`).
 */
export type EndpointShape = 'base' | 'azure-deployment' | 'vertex-openapi';

/** The declarative differences of one server family. */
export interface DialectProfile {
  readonly name: DialectName;
  /** A human-readable name for messages and `tpx doctor`. */
  readonly label: string;
  /** The field that carries `max_tokens`. */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Whether `stream_options: {include_usage: true}` is sent with a stream request. */
  readonly sendsStreamOptions: boolean;
  /** Whether `parallel_tool_calls` is sent (from `disable_parallel_tool_use`). */
  readonly sendsParallelToolCalls: boolean;
  /** How a reasoning effort is asked for. */
  readonly reasoningRequest: ReasoningRequest;
  /** Whether `user` is sent (from `metadata.user_id`). */
  readonly sendsUser: boolean;
  /** Which assistant messages keep `reasoning_content`. */
  readonly reasoningReplay: ReasoningReplay;
  /** `mistral`: tool-call ids sent upstream must be 9 characters of `[A-Za-z0-9]`. */
  readonly toolIdStyle: 'any' | 'mistral';
  /** Whether Gemini thought signatures are carried to the caller and echoed back on the next turn. */
  readonly echoesThoughtSignatures: boolean;
  /** Whether distinct whole tool calls streamed on one `index` are split apart (Gemini, Ollama). */
  readonly splitsSameIndexToolCalls: boolean;
  /** Whether usage sent inside `choices[0]` of a stream chunk is moved to the chunk (Kimi). */
  readonly liftsChoiceUsage: boolean;
  /** Where the endpoint lives. */
  readonly endpoint: EndpointShape;
  /**
   * How system messages after the first are sent: `in-place` (as `role: "system"` where they stand: the
   * server accepts them), or `fold` (one leading system message, later ones as user-side text in place:
   * for servers running open-model chat templates that refuse a system message anywhere but first; see
   * `fold-system-messages.ts`).
   */
  readonly systemMessages: SystemMessagePlacement;
  /**
   * How `count_tokens` counts: `llamacpp` (the server's `/apply-template` and `/tokenize`), `vllm` (the
   * server's `/tokenize`), or `estimate` (a local estimate, no upstream call). A server that cannot
   * answer falls back to the estimate. See `server-token-count.ts`.
   */
  readonly tokenCounting: TokenCounting;
  /**
   * The wire protocol used when `TPX_WIRE` / `--wire` does not say: Chat Completions (`chat`) or the
   * OpenAI Responses API (`responses`). Every profile defaults to `chat` today: it is what every listed
   * server speaks; a profile whose server serves some models only over Responses may say `responses`.
   */
  readonly defaultWire: 'chat' | 'responses';
  /**
   * Whether tool calls a model wrote in its text, in its chat template's format, are read as tool calls
   * when the request offered tools (`text-tool-calls.ts`): on for self-hosted servers, whose tool-call
   * parser may be off or not know the model's format; off for hosted services, which parse calls
   * themselves. `TPX_TEXT_TOOL_CALLS` overrides it.
   */
  readonly readsTextToolCalls: boolean;
  /**
   * How tool input schemas are sent, on both wires: `as-is` (the caller's JSON Schema), or
   * `gemini-subset` (rewritten into the OpenAPI 3.0 subset Google's function declarations take: no
   * `$schema`, `$ref` inlined, `additionalProperties` and other unknown keywords dropped, type arrays as
   * `nullable`; see `clean-tool-schema.ts`).
   */
  readonly toolSchemas: ToolSchemaStyle;
}

/** How a dialect counts tokens (see `DialectProfile.tokenCounting`). */
export type TokenCounting = 'estimate' | 'llamacpp' | 'vllm';

/** How a dialect sends system messages after the first (see `DialectProfile.systemMessages`). */
export type SystemMessagePlacement = 'in-place' | 'fold';

/** The Azure OpenAI data-plane `api-version` used when `TPX_AZURE_API_VERSION` is not set (latest GA). */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

type ProfileFields = Omit<DialectProfile, 'name' | 'label'>;

/** What a lenient, reference OpenAI-style server accepts; each profile states its differences. */
const OPENAI_LIKE: ProfileFields = {
  maxTokensField: 'max_tokens',
  sendsStreamOptions: true,
  sendsParallelToolCalls: true,
  reasoningRequest: 'reasoning_effort',
  sendsUser: true,
  reasoningReplay: 'none',
  toolIdStyle: 'any',
  echoesThoughtSignatures: false,
  splitsSameIndexToolCalls: false,
  liftsChoiceUsage: false,
  endpoint: 'base',
  systemMessages: 'in-place',
  tokenCounting: 'estimate',
  defaultWire: 'chat',
  readsTextToolCalls: false,
  toolSchemas: 'as-is',
};

const GEMINI_LIKE: ProfileFields = {
  ...OPENAI_LIKE,
  // Google's JSON front end rejects fields it does not know ("Unknown name \"parallel_tool_calls\"").
  sendsParallelToolCalls: false,
  sendsUser: false,
  echoesThoughtSignatures: true,
  splitsSameIndexToolCalls: true,
  // The same front end refuses JSON Schema keywords outside its OpenAPI subset ("Unknown name \"$schema\"").
  toolSchemas: 'gemini-subset',
};

function profile(name: DialectName, label: string, fields: ProfileFields): DialectProfile {
  return Object.freeze({ name, label, ...fields });
}

/** Every profile, by name. */
export const DIALECTS: Readonly<Record<DialectName, DialectProfile>> = Object.freeze({
  openai: profile('openai', 'OpenAI (api.openai.com)', {
    ...OPENAI_LIKE,
    maxTokensField: 'max_completion_tokens',
  }),
  azure: profile('azure', 'Azure OpenAI', {
    ...OPENAI_LIKE,
    maxTokensField: 'max_completion_tokens',
    endpoint: 'azure-deployment',
  }),
  // Self-hosted servers run the model's own chat template; many refuse a system message after the first.
  vllm: profile('vllm', 'vLLM', {
    ...OPENAI_LIKE,
    reasoningReplay: 'tool-turns',
    systemMessages: 'fold',
    tokenCounting: 'vllm',
    readsTextToolCalls: true,
  }),
  llamacpp: profile('llamacpp', 'llama.cpp server', {
    ...OPENAI_LIKE,
    reasoningRequest: 'none',
    sendsUser: false,
    reasoningReplay: 'tool-turns',
    systemMessages: 'fold',
    tokenCounting: 'llamacpp',
    readsTextToolCalls: true,
  }),
  ollama: profile('ollama', 'Ollama', {
    ...OPENAI_LIKE,
    sendsParallelToolCalls: false,
    sendsUser: false,
    splitsSameIndexToolCalls: true,
    systemMessages: 'fold',
    readsTextToolCalls: true,
  }),
  deepseek: profile('deepseek', 'DeepSeek (api.deepseek.com)', {
    ...OPENAI_LIKE,
    sendsParallelToolCalls: false,
    sendsUser: false,
    reasoningReplay: 'tool-turns',
  }),
  mistral: profile('mistral', 'Mistral (api.mistral.ai)', {
    ...OPENAI_LIKE,
    // Mistral validates bodies strictly (422 "Extra inputs are not permitted").
    sendsStreamOptions: false,
    reasoningRequest: 'none',
    sendsUser: false,
    toolIdStyle: 'mistral',
  }),
  kimi: profile('kimi', 'Kimi (api.moonshot.ai)', {
    ...OPENAI_LIKE,
    sendsParallelToolCalls: false,
    reasoningRequest: 'none',
    sendsUser: false,
    reasoningReplay: 'tool-turns',
    liftsChoiceUsage: true,
  }),
  groq: profile('groq', 'Groq (api.groq.com)', OPENAI_LIKE),
  openrouter: profile('openrouter', 'OpenRouter (openrouter.ai)', {
    ...OPENAI_LIKE,
    reasoningRequest: 'reasoning-object',
  }),
  gemini: profile('gemini', 'Gemini API (generativelanguage.googleapis.com)', GEMINI_LIKE),
  vertex: profile('vertex', 'Vertex AI (aiplatform.googleapis.com)', {
    ...GEMINI_LIKE,
    endpoint: 'vertex-openapi',
  }),
  // An unknown server is most often a self-hosted open model: folding costs a server that accepts system
  // messages anywhere nothing, and is the only way through for one that does not.
  'openai-generic': profile('openai-generic', 'a generic OpenAI-compatible server', {
    ...OPENAI_LIKE,
    reasoningReplay: 'all',
    systemMessages: 'fold',
    readsTextToolCalls: true,
  }),
});

/** Hosts that name exactly one dialect. Suffix rules follow in `detectDialect`. */
const DIALECT_BY_HOST: ReadonlyMap<string, DialectName> = new Map<string, DialectName>([
  ['api.openai.com', 'openai'],
  ['api.deepseek.com', 'deepseek'],
  ['api.mistral.ai', 'mistral'],
  ['api.moonshot.ai', 'kimi'],
  ['api.moonshot.cn', 'kimi'],
  ['api.groq.com', 'groq'],
  ['openrouter.ai', 'openrouter'],
  ['generativelanguage.googleapis.com', 'gemini'],
  ['ollama.com', 'ollama'],
]);

/**
 * The dialect a base URL's host names unambiguously, or `undefined` (a local server, a proxy, an
 * unknown host: the caller then uses `openai-generic`).
 *
 * @example
 * detectDialect('https://api.mistral.ai/v1')                                   // → 'mistral'
 * detectDialect('https://my-resource.openai.azure.com')                        // → 'azure'
 * detectDialect('https://us-central1-aiplatform.googleapis.com/v1/projects/p') // → 'vertex'
 * detectDialect('http://127.0.0.1:8000/v1')                                    // → undefined
 */
export function detectDialect(baseUrl: string): DialectName | undefined {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return undefined;
  }
  const exact = DIALECT_BY_HOST.get(host);
  if (exact !== undefined) return exact;
  if (host.endsWith('.openrouter.ai')) return 'openrouter';
  if (host.endsWith('.openai.azure.com')) return 'azure';
  // Regional hosts are `{region}-aiplatform.googleapis.com`; the global one has no prefix.
  if (host.endsWith('aiplatform.googleapis.com')) return 'vertex';
  return undefined;
}

/**
 * Reads a dialect name as a user wrote it (case and surrounding blanks do not matter).
 *
 * @param source the option or variable it came from, for the error message (`TPX_DIALECT`)
 * @throws TransportError `MODEL_ECONFIG` for a name that is not a dialect, listing the valid ones.
 */
export function parseDialectName(value: string, source: string): DialectName {
  const name = value.trim().toLowerCase();
  const known = (DIALECT_NAMES as readonly string[]).includes(name);
  if (!known) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `${source} is ${JSON.stringify(value)}, which is not a known dialect; use one of: ${DIALECT_NAMES.join(', ')}`,
    );
  }
  return name as DialectName;
}

/** What the endpoint URLs depend on besides the profile. */
export interface EndpointOptions {
  /** The base URL, without a trailing slash. */
  baseUrl: string;
  /** The model sent upstream: Azure's deployment name when the base URL does not name one. */
  model: string;
  /** Azure's `api-version`. @default DEFAULT_AZURE_API_VERSION */
  azureApiVersion?: string;
}

/**
 * The Chat Completions URL.
 *
 * | endpoint           | base URL                                             | URL |
 * |--------------------|------------------------------------------------------|-----|
 * | `base`             | any                                                  | `{base}/chat/completions` |
 * | `azure-deployment` | `https://{resource}.openai.azure.com[/openai]`       | `{resource}/openai/deployments/{model}/chat/completions?api-version={v}` |
 * | `azure-deployment` | `…/openai/deployments/{deployment}`                  | `{base}/chat/completions?api-version={v}` |
 * | `azure-deployment` | `…/openai/v1` (the version-less v1 API)              | `{base}/chat/completions` |
 * | `vertex-openapi`   | `…/projects/{p}/locations/{l}`                       | `{base}/endpoints/openapi/chat/completions` |
 * | `vertex-openapi`   | `…/endpoints/openapi` (or anything else)             | `{base}/chat/completions` |
 */
export function chatCompletionsUrl(profile: DialectProfile, options: EndpointOptions): string {
  return `${endpointRoot(profile, options)}/chat/completions${endpointQuery(profile, options)}`;
}

/** The model-list URL, built like `chatCompletionsUrl` (Azure: `{resource}/openai/models?api-version={v}`). */
export function modelsUrl(profile: DialectProfile, options: EndpointOptions): string {
  if (profile.endpoint === 'azure-deployment') {
    const { path, origin } = splitUrl(options.baseUrl);
    if (!/\/openai\/v1$/.test(path)) {
      const openai = path.replace(/\/openai(\/deployments\/[^/]+)?$/, '');
      return `${origin}${openai}/openai/models${endpointQuery(profile, options)}`;
    }
  }
  return `${endpointRoot(profile, options)}/models${endpointQuery(profile, options)}`;
}

function endpointRoot(profile: DialectProfile, options: EndpointOptions): string {
  const { baseUrl } = options;
  switch (profile.endpoint) {
    case 'base':
      return baseUrl;
    case 'azure-deployment': {
      const { path, origin } = splitUrl(baseUrl);
      if (/\/openai\/v1$/.test(path) || /\/openai\/deployments\/[^/]+$/.test(path)) return baseUrl;
      const resource = path.replace(/\/openai$/, '');
      return `${origin}${resource}/openai/deployments/${encodeURIComponent(options.model)}`;
    }
    case 'vertex-openapi': {
      const { path } = splitUrl(baseUrl);
      return /\/locations\/[^/]+$/.test(path) ? `${baseUrl}/endpoints/openapi` : baseUrl;
    }
    default: {
      const unknown: never = profile.endpoint;
      return unknown;
    }
  }
}

function endpointQuery(profile: DialectProfile, options: EndpointOptions): string {
  if (profile.endpoint !== 'azure-deployment') return '';
  // The v1 API takes no api-version; the dated deployment routes require one.
  if (/\/openai\/v1$/.test(splitUrl(options.baseUrl).path)) return '';
  return `?api-version=${encodeURIComponent(options.azureApiVersion ?? DEFAULT_AZURE_API_VERSION)}`;
}

function splitUrl(baseUrl: string): { origin: string; path: string } {
  const url = new URL(baseUrl);
  return { origin: url.origin, path: url.pathname.replace(/\/+$/, '') };
}
