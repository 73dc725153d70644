/**
 * The Messages side of translating a whole answer, shared by both wires' decoders
 * (`translateResponse`, `translateResponsesResponse`): the `message` around the blocks a decoder read,
 * with the ids and names translated back. Pure: fresh ids come from the caller's `generateId`.
 *
 * @module
 */
import type { ContentBlock, Message, StopReason, Usage } from '../protocol/messages.js';
import { readToolArguments, type ToolReading } from './read-tool-input.js';
import { readTextToolCalls, type TextToolCall } from './text-tool-calls.js';
import { encodeToolIds } from './tool-id-codec.js';

/** The part of the tool-name map the answer translators need (see `tool-name-codec.ts`). */
export interface UpstreamToolNames {
  /** The caller's tool name for a name the provider used. */
  fromUpstream(name: string): string;
}

/** What an answer translator needs besides the upstream data. */
export interface ResponseContext extends ToolReading {
  /** The `model` of the caller's request, echoed back (clients compare it). */
  requestModel: string;
  /** Maps provider tool names back to the caller's. */
  toolNames: UpstreamToolNames;
  /** Fresh `[A-Za-z0-9_-]+` ids, for a message or tool call the provider gave no usable id. */
  generateId: () => string;
  /**
   * The tool names the upstream was offered, when tool calls a model wrote as text are read as calls
   * (`text-tool-calls.ts`). @default none: text stays text
   */
  textToolCalls?: ReadonlySet<string> | undefined;
}

/** A tool call of a whole answer, as the decoder read it: ids and names still the provider's. */
export interface AnswerToolCall {
  type: 'tool_call';
  providerId: string | undefined;
  upstreamName: string;
  input: Record<string, unknown>;
}

const SAFE_ID = /^[A-Za-z0-9_-]+$/;
const MAX_MESSAGE_ID_LENGTH = 200;

/**
 * The Messages id for an upstream response id: `msg_` + the upstream id when it is a non-empty
 * `[A-Za-z0-9_-]+` string of at most 200 characters (kept as is when it already starts with `msg_`), else
 * `msg_` + `generateId()`.
 */
export function messageIdFor(upstreamId: unknown, generateId: () => string): string {
  if (
    typeof upstreamId === 'string' &&
    upstreamId.length <= MAX_MESSAGE_ID_LENGTH &&
    SAFE_ID.test(upstreamId)
  ) {
    return upstreamId.startsWith('msg_') ? upstreamId : `msg_${upstreamId}`;
  }
  return `msg_${generateId()}`;
}

/**
 * The `message` for an answer's blocks, in order. The message id is made first, then the tool ids: all
 * together through the tool-id codec (`encodeToolIds`: repeated, empty and odd provider ids get distinct,
 * valid ids, each decoding to a wire id of its own), in the order a stream gives them. Tool names go back through `toolNames`;
 * `stop_sequence` is always `null` (OpenAI-compatible servers do not say which sequence matched).
 */
export function assembleMessage(
  context: ResponseContext,
  upstreamId: unknown,
  blocks: readonly (ContentBlock | AnswerToolCall)[],
  stopReason: StopReason,
  usage: Usage,
): Message {
  // The message id first, as the stream writer makes it, so that both number a deterministic id source
  // the same way.
  const id = messageIdFor(upstreamId, context.generateId);
  const read = withTextToolCalls(context, blocks);
  const stop = read !== blocks && stopReason === 'end_turn' ? 'tool_use' : stopReason;
  const calls = read.filter((block): block is AnswerToolCall => block.type === 'tool_call');
  const ids = encodeToolIds(
    calls.map((call) => call.providerId),
    context.generateId,
  );
  let position = 0;
  const content = read.map((block): ContentBlock => {
    if (block.type !== 'tool_call') return block;
    return {
      type: 'tool_use',
      id: ids[position++]!,
      name: context.toolNames.fromUpstream(block.upstreamName),
      input: block.input,
    };
  });
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: context.requestModel,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage,
  };
}

/**
 * `blocks` with a last text block that is tool calls written as text read as those calls (the text
 * before them kept); `blocks` itself when there are none or reading them is off. Only the last block: a
 * call followed by anything is an example, as in a stream (`MessageStreamWriter`).
 */
function withTextToolCalls(
  context: ResponseContext,
  blocks: readonly (ContentBlock | AnswerToolCall)[],
): readonly (ContentBlock | AnswerToolCall)[] {
  const offered = context.textToolCalls;
  const last = blocks.at(-1);
  if (offered === undefined || last?.type !== 'text') return blocks;
  const { text, calls } = readTextToolCalls(last.text, offered);
  if (calls.length === 0) return blocks;
  const read: (ContentBlock | AnswerToolCall)[] = blocks.slice(0, -1);
  if (text !== '') read.push({ ...last, text });
  for (const call of calls) {
    read.push({
      type: 'tool_call',
      providerId: undefined,
      upstreamName: call.name,
      input: textCallInput(call, context),
    });
  }
  return read;
}

/**
 * The input of a call read from text: its arguments fitted to the tool's schema, as a call's arguments
 * are (`readToolArguments`); the reading is reported as a repair.
 */
export function textCallInput(call: TextToolCall, context: ResponseContext): Record<string, unknown> {
  context.onRepair?.({ tool: call.name, kind: 'text-call' });
  return readToolArguments(
    call.input,
    { position: 0, name: call.name, id: undefined },
    { isCut: false, schema: context.toolSchemas?.get(call.name), onRepair: context.onRepair },
  ).input;
}
