/**
 * Applies a dialect profile (`dialects.ts`) around the common translator, in both directions. Pure: no
 * I/O, no clock, no environment.
 *
 * - Out: `applyDialectToRequest` post-processes the translated body: it drops the optional fields the
 *   server does not accept, asks for reasoning the way the server expects, keeps `reasoning_content`
 *   only where the server wants it replayed, folds system messages after the first where the server's
 *   templates refuse them, echoes Gemini thought signatures, maps tool-call ids to Mistral's shape, and
 *   cuts tool input schemas to what the server accepts (`clean-tool-schema.ts`).
 *   `applyDialectToResponsesRequest` does the last for the Responses wire.
 * - Back: `normalizeResponse` and `createChunkNormalizer` undo the quirks the translator does not handle
 *   by itself (whole tool calls streamed on one `index`, usage inside `choices[0]`) and pick up thought
 *   signatures, before the answer reaches `translateResponse` / `StreamTranslator`.
 *
 * **Thought signatures.** Gemini returns an opaque `thought_signature` with a tool call and answers 400
 * when the next turn does not send it back (`extra_content.google.thought_signature` on the assistant's
 * tool call). The Messages protocol has no field for it, and the proxy keeps no conversation state, so the
 * signature travels inside the tool-call id itself: the provider id becomes
 * `<provider id>\u0000thought_signature:<signature>` before translation, which the tool-id codec turns
 * into an opaque, valid, reversible `tpx_e…` id for the caller. On the next request the codec gives the
 * combined string back, and `applyDialectToRequest` splits it into the id and `extra_content`. A call
 * that came without an id is sent back as `call_` + 24 hex characters of the signature's sha256.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type {
  ChatAssistantMessage,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatCompletionResponse,
  ChatCompletionUsage,
  ChatMessage,
  ChatToolCall,
  ChatToolCallIn,
} from '../protocol/chat-completions.js';
import type { ResponsesRequest } from '../protocol/responses.js';
import { cleanToolSchema } from './clean-tool-schema.js';
import type { DialectProfile } from './dialects.js';
import { foldSystemMessages } from './fold-system-messages.js';
import { mapMistralToolIds } from './mistral-tool-ids.js';
import { isObject } from '../protocol/is-object.js';

/** The request body after a dialect was applied: Chat Completions plus the extensions some servers want. */
export interface DialectChatRequest extends ChatCompletionRequest {
  /** OpenRouter's reasoning control (instead of `reasoning_effort`). */
  reasoning?: { effort: string };
}

/** A tool call as sent to a Gemini-family server, with the thought signature it asked to get back. */
export interface SignedChatToolCall extends ChatToolCall {
  extra_content?: { google: { thought_signature: string } };
}

/** Separates a provider tool-call id from the thought signature carried with it. */
const SIGNATURE_MARK = '\u0000thought_signature:';

/**
 * The provider id to use for a tool call that came with a thought signature: the id and the signature,
 * joined so that `splitThoughtSignature` can take them apart again (see the module comment).
 */
export function carryThoughtSignature(providerId: string, signature: string): string {
  return `${providerId}${SIGNATURE_MARK}${signature}`;
}

/** Takes apart an id built by `carryThoughtSignature`; any other id comes back with no signature. */
export function splitThoughtSignature(id: string): { id: string; signature: string | undefined } {
  const at = id.indexOf(SIGNATURE_MARK);
  if (at < 0) return { id, signature: undefined };
  return { id: id.slice(0, at), signature: id.slice(at + SIGNATURE_MARK.length) };
}

// ---------------------------------------------------------------------------------------------------
// Requests

/**
 * The translated body as this dialect's server accepts it. Returns a new body; the input is not changed.
 *
 * @throws TransportError `MODEL_EINVAL` when two tool-call ids of the conversation would reach Mistral as
 *   the same id (see `mapMistralToolIds`).
 */
export function applyDialectToRequest(
  profile: DialectProfile,
  body: ChatCompletionRequest,
): DialectChatRequest {
  const result: DialectChatRequest = { ...body };
  if (!profile.sendsStreamOptions) delete result.stream_options;
  if (!profile.sendsParallelToolCalls) delete result.parallel_tool_calls;
  if (!profile.sendsUser) delete result.user;

  const effort = result.reasoning_effort;
  if (effort !== undefined) {
    switch (profile.reasoningRequest) {
      case 'reasoning_effort':
        break;
      case 'reasoning-object':
        delete result.reasoning_effort;
        result.reasoning = { effort };
        break;
      case 'none':
        delete result.reasoning_effort;
        break;
      default: {
        const unknown: never = profile.reasoningRequest;
        throw new Error(`unknown reasoning request style ${String(unknown)}`);
      }
    }
  }

  if (body.tools !== undefined && profile.toolSchemas !== 'as-is') {
    result.tools = body.tools.map((tool) => {
      const { parameters } = tool.function;
      if (parameters === undefined) return tool;
      return {
        ...tool,
        function: { ...tool.function, parameters: cleanToolSchema(parameters, profile.toolSchemas) },
      };
    });
  }

  let messages = body.messages.map((message) => shapeMessage(profile, message));
  if (profile.systemMessages === 'fold') messages = foldSystemMessages(messages);
  if (profile.toolIdStyle === 'mistral') messages = mapMistralToolIds(messages).messages;
  result.messages = messages;
  return result;
}

/**
 * The translated Responses body as this dialect's server accepts it: tool input schemas cut to what the
 * server takes (`DialectProfile.toolSchemas`). Returns a new body when something changed, else the same.
 */
export function applyDialectToResponsesRequest(
  profile: DialectProfile,
  body: ResponsesRequest,
): ResponsesRequest {
  if (body.tools === undefined || profile.toolSchemas === 'as-is') return body;
  const tools = body.tools.map((tool) => ({
    ...tool,
    parameters: cleanToolSchema(tool.parameters, profile.toolSchemas),
  }));
  return { ...body, tools };
}

function shapeMessage(profile: DialectProfile, message: ChatMessage): ChatMessage {
  switch (message.role) {
    case 'tool': {
      const { id, signature } = splitThoughtSignature(message.tool_call_id);
      return signature === undefined ? message : { ...message, tool_call_id: sentIdFor(id, signature) };
    }
    case 'assistant':
      return shapeAssistant(profile, message);
    case 'system':
    case 'developer':
    case 'user':
      return message;
    default: {
      const unknown: never = message;
      return unknown;
    }
  }
}

function shapeAssistant(profile: DialectProfile, message: ChatAssistantMessage): ChatAssistantMessage {
  const shaped: ChatAssistantMessage = { ...message };
  const hasToolCalls = message.tool_calls !== undefined && message.tool_calls.length > 0;
  const keepsReasoning =
    profile.reasoningReplay === 'all' || (profile.reasoningReplay === 'tool-turns' && hasToolCalls);
  if (!keepsReasoning) delete shaped.reasoning_content;
  if (message.tool_calls !== undefined) {
    shaped.tool_calls = message.tool_calls.map((call): ChatToolCall => {
      const { id, signature } = splitThoughtSignature(call.id);
      if (signature === undefined) return call;
      const signed: SignedChatToolCall = { ...call, id: sentIdFor(id, signature) };
      if (profile.echoesThoughtSignatures)
        signed.extra_content = { google: { thought_signature: signature } };
      return signed;
    });
  }
  return shaped;
}

/** The id sent back for a call that carried a signature: its own id, or one derived from the signature. */
function sentIdFor(id: string, signature: string): string {
  if (id !== '') return id;
  return `call_${createHash('sha256').update(signature, 'utf8').digest('hex').slice(0, 24)}`;
}

// ---------------------------------------------------------------------------------------------------
// Responses

/**
 * A non-streaming response with the dialect's quirks undone: for Gemini-family servers, each tool call's
 * thought signature (on the call's `extra_content`, or for the first call on the message's
 * `extra_content` / `thought_signature`, where Gemini 2.5 put it) is carried in its id. Returns a new
 * response when something changed, else the same one.
 */
export function normalizeResponse(
  profile: DialectProfile,
  response: ChatCompletionResponse,
): ChatCompletionResponse {
  if (!profile.echoesThoughtSignatures) return response;
  let changed = false;
  const choices = response.choices.map((choice) => {
    const message = choice.message;
    const toolCalls = message.tool_calls;
    if (!Array.isArray(toolCalls) || toolCalls.length === 0) return choice;
    const messageSignature = signatureOf(message) ?? nonEmptyString(message['thought_signature']);
    const anyCallSigned = toolCalls.some((call) => signatureOf(call) !== undefined);
    const calls = toolCalls.map((call, position) => {
      const signature =
        signatureOf(call) ?? (position === 0 && !anyCallSigned ? messageSignature : undefined);
      if (signature === undefined) return call;
      changed = true;
      return { ...call, id: carryThoughtSignature(nonEmptyString(call.id) ?? '', signature) };
    });
    return { ...choice, message: { ...message, tool_calls: calls } };
  });
  return changed ? { ...response, choices } : response;
}

/**
 * A stateful per-stream normalizer: call it on every parsed chunk, in order, and hand what it returns to
 * the stream translator. It returns the same chunk when nothing needed changing.
 *
 * - `liftsChoiceUsage` (Kimi): usage sent inside `choices[0]` is moved to the chunk's `usage`.
 * - `splitsSameIndexToolCalls` (Gemini, Vertex, Ollama): these servers send every parallel call whole,
 *   each on `index: 0`; a fragment that names a function (or brings a different id) while the call on
 *   its index already has a name and complete JSON arguments starts a new call. Indexed calls are
 *   renumbered 0, 1, 2… in order of appearance.
 * - `echoesThoughtSignatures` (Gemini, Vertex): a call's thought signature (on the call's
 *   `extra_content`, or on the delta's for the first named call in it) is carried in its id.
 */
export function createChunkNormalizer(
  profile: DialectProfile,
): (chunk: ChatCompletionChunk) => ChatCompletionChunk {
  const needsToolPass = profile.splitsSameIndexToolCalls || profile.echoesThoughtSignatures;
  if (!profile.liftsChoiceUsage && !needsToolPass) return (chunk) => chunk;
  const splitter = new SameIndexSplitter();
  const carriedIds = new Map<string, string>();

  return (chunk) => {
    let result = chunk;
    if (profile.liftsChoiceUsage) result = liftChoiceUsage(result);
    if (!needsToolPass || !Array.isArray(result.choices)) return result;
    let changed = false;
    const choices = result.choices.map((choice) => {
      if (!isObject(choice) || !(choice.index === undefined || choice.index === null || choice.index === 0)) {
        return choice;
      }
      const delta = choice.delta;
      if (!isObject(delta) || !Array.isArray(delta.tool_calls)) return choice;
      let deltaSignature = profile.echoesThoughtSignatures ? signatureOf(delta) : undefined;
      const calls = delta.tool_calls.map((raw: unknown) => {
        if (!isObject(raw)) return raw;
        let call: Record<string, unknown> = raw;
        if (profile.echoesThoughtSignatures) {
          // A signature on the delta belongs to the first call it names (Gemini signs the first of a
          // set of parallel calls).
          const named = nonEmptyString(functionOf(call)?.['name']) !== undefined;
          const signature = signatureOf(call) ?? (named ? deltaSignature : undefined);
          if (named) deltaSignature = undefined;
          call = carrySignature(call, signature, carriedIds);
        }
        if (profile.splitsSameIndexToolCalls) call = splitter.reindex(call);
        if (call !== raw) changed = true;
        return call;
      });
      return { ...choice, delta: { ...delta, tool_calls: calls as ChatToolCallIn[] } };
    });
    return changed ? { ...result, choices } : result;
  };
}

/** Moves Kimi's per-choice usage to the chunk, unless the chunk has its own. */
function liftChoiceUsage(chunk: ChatCompletionChunk): ChatCompletionChunk {
  if (isObject(chunk.usage) || !Array.isArray(chunk.choices)) return chunk;
  const carrier = chunk.choices.find((choice) => isObject(choice) && isObject(choice['usage']));
  if (carrier === undefined) return chunk;
  return { ...chunk, usage: carrier['usage'] as ChatCompletionUsage };
}

/** Carries a signature in a call's id, and keeps later fragments of the same call on the carried id. */
function carrySignature(
  call: Record<string, unknown>,
  signature: string | undefined,
  carriedIds: Map<string, string>,
): Record<string, unknown> {
  const id = nonEmptyString(call['id']);
  if (signature !== undefined) {
    const carried = carryThoughtSignature(id ?? '', signature);
    if (id !== undefined) carriedIds.set(id, carried);
    return { ...call, id: carried };
  }
  const carried = id === undefined ? undefined : carriedIds.get(id);
  return carried === undefined ? call : { ...call, id: carried };
}

/** Renumbers indexed tool-call fragments so that whole calls repeated on one index become distinct calls. */
class SameIndexSplitter {
  readonly #current = new Map<
    number,
    { index: number; id: string | undefined; named: boolean; args: string[] }
  >();
  #next = 0;

  reindex(call: Record<string, unknown>): Record<string, unknown> {
    const upstreamIndex = call['index'];
    if (typeof upstreamIndex !== 'number' || !Number.isInteger(upstreamIndex) || upstreamIndex < 0)
      return call;
    const id = nonEmptyString(call['id']);
    const fn = functionOf(call);
    const name = nonEmptyString(fn?.['name']);
    const argumentsValue = fn?.['arguments'];
    const fragment =
      typeof argumentsValue === 'string'
        ? argumentsValue
        : argumentsValue === undefined || argumentsValue === null
          ? ''
          : (JSON.stringify(argumentsValue) ?? '');

    let state = this.#current.get(upstreamIndex);
    const startsAnother =
      state !== undefined &&
      (name !== undefined || (id !== undefined && state.id !== undefined && id !== state.id)) &&
      state.named &&
      isCompleteJson(state.args.join(''));
    if (state === undefined || startsAnother) {
      state = { index: this.#next++, id: undefined, named: false, args: [] };
      this.#current.set(upstreamIndex, state);
    }
    if (state.id === undefined && id !== undefined) state.id = id;
    if (name !== undefined) state.named = true;
    if (fragment !== '') state.args.push(fragment);
    return state.index === upstreamIndex ? call : { ...call, index: state.index };
  }
}

function isCompleteJson(text: string): boolean {
  if (!/\S/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** `extra_content.google.thought_signature` of a call, delta or message, when it is a non-empty string. */
function signatureOf(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  const extra = value['extra_content'];
  if (!isObject(extra)) return undefined;
  const google = extra['google'];
  return isObject(google) ? nonEmptyString(google['thought_signature']) : undefined;
}

function functionOf(call: Record<string, unknown>): Record<string, unknown> | undefined {
  const fn = call['function'];
  return isObject(fn) ? fn : undefined;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
