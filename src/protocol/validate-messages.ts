/**
 * Run-time validators for the Messages protocol, compiled once with TypeBox's JIT compiler. Requests are
 * checked in two steps: the envelope (model, max_tokens, messages, tools, …) by one compiled validator,
 * then each content block by the compiled validator of its own `type`, so an error names the exact block
 * and field. Unknown fields and unknown block types are accepted and kept (the protocol grows).
 *
 * @module
 */
import { isObject } from './is-object.js';
import Type, { type TSchema } from 'typebox';
import { compileChecker as compile, type Checker } from './compile-checker.js';
import type { Message, MessagesRequest, MessageStreamEvent } from './messages.js';
import { describeErrors, formatPath } from './format-errors.js';

/** The result of a validation: the value, typed, or a sentence saying what is wrong. */
export type Validated<T> = { ok: true; value: T } | { ok: false; message: string };

const Obj = (properties: Record<string, TSchema>) => Type.Object(properties);
const Str = () => Type.String();
const Nullable = (schema: TSchema) => Type.Union([schema, Type.Null()]);
const Literals = (...values: string[]) => Type.Union(values.map((value) => Type.Literal(value)));

const TypedObject = Obj({ type: Str() });
const InputObject = Type.Record(Type.String(), Type.Unknown());

const TextBlockParam = Obj({ type: Type.Literal('text'), text: Str() });
const ImageBlockParam = Obj({ type: Type.Literal('image'), source: TypedObject });
const DocumentBlockParam = Obj({ type: Type.Literal('document'), source: TypedObject });
const ToolUseBlockParam = Obj({ type: Type.Literal('tool_use'), id: Str(), name: Str(), input: InputObject });
const ToolResultBlockParam = Obj({
  type: Type.Literal('tool_result'),
  tool_use_id: Str(),
  content: Type.Optional(Type.Union([Str(), Type.Array(TypedObject)])),
  is_error: Type.Optional(Type.Boolean()),
});
const ThinkingBlockParam = Obj({ type: Type.Literal('thinking'), thinking: Str(), signature: Str() });
const RedactedThinkingBlockParam = Obj({ type: Type.Literal('redacted_thinking'), data: Str() });

const BLOCK_VALIDATORS: ReadonlyMap<string, Checker> = new Map([
  ['text', compile(TextBlockParam)],
  ['image', compile(ImageBlockParam)],
  ['document', compile(DocumentBlockParam)],
  ['tool_use', compile(ToolUseBlockParam)],
  ['tool_result', compile(ToolResultBlockParam)],
  ['thinking', compile(ThinkingBlockParam)],
  ['redacted_thinking', compile(RedactedThinkingBlockParam)],
]);

const MessagesRequestSchema = Obj({
  model: Type.String({ minLength: 1 }),
  max_tokens: Type.Integer({ minimum: 0 }),
  messages: Type.Array(
    Obj({
      role: Literals('user', 'assistant', 'system'),
      content: Type.Union([Str(), Type.Array(TypedObject)]),
    }),
  ),
  system: Type.Optional(Type.Union([Str(), Type.Array(TextBlockParam)])),
  stop_sequences: Type.Optional(Type.Array(Str())),
  stream: Type.Optional(Type.Boolean()),
  temperature: Type.Optional(Type.Number()),
  top_p: Type.Optional(Type.Number()),
  top_k: Type.Optional(Type.Integer()),
  // A client tool needs a name; a toolset (`browser_toolset_20260801`) has only a versioned `type`.
  // Which one a nameless tool is, is checked after this validator (see `checkTools`).
  tools: Type.Optional(
    Type.Array(
      Obj({ name: Type.Optional(Type.String({ minLength: 1 })), type: Type.Optional(Nullable(Str())) }),
    ),
  ),
  // `{type:"tool"}` also needs a `name`: checked after this validator, so that the error names the field
  // instead of listing the other variants.
  tool_choice: Type.Optional(
    Obj({
      type: Literals('auto', 'any', 'none', 'tool'),
      disable_parallel_tool_use: Type.Optional(Type.Boolean()),
    }),
  ),
  thinking: Type.Optional(TypedObject),
  metadata: Type.Optional(Obj({ user_id: Type.Optional(Nullable(Str())) })),
  output_config: Type.Optional(InputObject),
});

const requestValidator = compile(MessagesRequestSchema);

/**
 * Validates a caller's Messages request. The result's `value` is the same object (not a copy), so
 * extra fields the caller sent are kept.
 */
export function validateMessagesRequest(value: unknown): Validated<MessagesRequest> {
  if (!isObject(value)) {
    return { ok: false, message: 'the request body must be a JSON object' };
  }
  if (!requestValidator.check(value)) {
    return { ok: false, message: describeErrors(requestValidator.errors(value)) };
  }
  const request = value as MessagesRequest;
  const problem = checkTools(request) ?? checkBlocks(request);
  return problem === undefined ? { ok: true, value: request } : { ok: false, message: problem };
}

/** The checks of `tools` and `tool_choice` that depend on another field's value. */
function checkTools(request: MessagesRequest): string | undefined {
  const tools = request.tools ?? [];
  for (let t = 0; t < tools.length; t++) {
    const tool = tools[t]!;
    if (
      tool.name === undefined &&
      (tool.type === undefined || tool.type === null || tool.type === 'custom')
    ) {
      return `tools[${t}].name: is required`;
    }
  }
  const choice = request.tool_choice;
  if (choice?.type === 'tool' && typeof (choice as { name?: unknown }).name !== 'string') {
    return 'tool_choice.name: must be string (required when tool_choice.type is "tool")';
  }
  return undefined;
}

/** Checks each content block of known type by its type's validator, tool_result contents included. */
function checkBlocks(request: MessagesRequest): string | undefined {
  const messages = request.messages;
  for (let m = 0; m < messages.length; m++) {
    const content = messages[m]!.content;
    if (typeof content === 'string') continue;
    for (let b = 0; b < content.length; b++) {
      const block = content[b]!;
      const pointer = `/messages/${m}/content/${b}`;
      const problem = checkBlock(block, pointer);
      if (problem !== undefined) return problem;
      if (block.type === 'tool_result') {
        const inner = (block as { content?: unknown }).content;
        if (Array.isArray(inner)) {
          for (let i = 0; i < inner.length; i++) {
            const innerProblem = checkBlock(inner[i] as { type: string }, `${pointer}/content/${i}`);
            if (innerProblem !== undefined) return innerProblem;
          }
        }
      }
    }
  }
  return undefined;
}

function checkBlock(block: { type: string }, pointer: string): string | undefined {
  const validator = BLOCK_VALIDATORS.get(block.type);
  if (validator === undefined || validator.check(block)) return undefined;
  return `${describeErrors(validator.errors(block), 1, pointer)} (${block.type} block)`;
}

// ---------------------------------------------------------------------------------------------------
// Responses and stream events (from the native provider, and checks on our own translations)

const UsageSchema = Obj({ input_tokens: Type.Number(), output_tokens: Type.Number() });
const ResponseBlock = TypedObject;

const MessageSchema = Obj({
  id: Str(),
  type: Type.Literal('message'),
  role: Type.Literal('assistant'),
  model: Str(),
  content: Type.Array(ResponseBlock),
  stop_reason: Nullable(Str()),
  stop_sequence: Type.Optional(Nullable(Str())),
  usage: UsageSchema,
});

const RESPONSE_BLOCK_VALIDATORS: ReadonlyMap<string, Checker> = new Map([
  ['text', compile(Obj({ type: Type.Literal('text'), text: Str() }))],
  ['thinking', compile(ThinkingBlockParam)],
  ['redacted_thinking', compile(RedactedThinkingBlockParam)],
  ['tool_use', compile(ToolUseBlockParam)],
]);

const messageValidator = compile(MessageSchema);

/** Validates a Messages `message` (a provider's non-streaming answer). */
export function validateMessage(value: unknown): Validated<Message> {
  if (!messageValidator.check(value)) {
    return { ok: false, message: describeErrors(messageValidator.errors(value)) };
  }
  const message = value as Message;
  for (let b = 0; b < message.content.length; b++) {
    const block = message.content[b]!;
    const validator = RESPONSE_BLOCK_VALIDATORS.get(block.type);
    if (validator !== undefined && !validator.check(block)) {
      return {
        ok: false,
        message: `${describeErrors(validator.errors(block), 1, `/content/${b}`)} (${block.type} block)`,
      };
    }
  }
  return { ok: true, value: message };
}

// Deltas are checked by the validator of their own `type` (like content blocks), so that an error names
// the field of that delta instead of listing every other delta type.
const DELTA_VALIDATORS: ReadonlyMap<string, Checker> = new Map([
  ['text_delta', compile(Obj({ type: Type.Literal('text_delta'), text: Str() }))],
  ['input_json_delta', compile(Obj({ type: Type.Literal('input_json_delta'), partial_json: Str() }))],
  ['thinking_delta', compile(Obj({ type: Type.Literal('thinking_delta'), thinking: Str() }))],
  ['signature_delta', compile(Obj({ type: Type.Literal('signature_delta'), signature: Str() }))],
  ['citations_delta', compile(Obj({ type: Type.Literal('citations_delta'), citation: Type.Unknown() }))],
]);
// Any delta type is accepted, as any block type is: Anthropic adds new ones often, and a client that
// does not know one skips it (the official SDK does); the known ones are checked field by field below.
const DeltaSchema = Obj({ type: Str() });
const Index = Type.Integer({ minimum: 0 });

const EVENT_VALIDATORS: ReadonlyMap<string, Checker> = new Map([
  ['message_start', compile(Obj({ type: Type.Literal('message_start'), message: MessageSchema }))],
  [
    'content_block_start',
    compile(Obj({ type: Type.Literal('content_block_start'), index: Index, content_block: ResponseBlock })),
  ],
  [
    'content_block_delta',
    compile(Obj({ type: Type.Literal('content_block_delta'), index: Index, delta: DeltaSchema })),
  ],
  ['content_block_stop', compile(Obj({ type: Type.Literal('content_block_stop'), index: Index }))],
  [
    'message_delta',
    compile(
      Obj({
        type: Type.Literal('message_delta'),
        delta: Obj({ stop_reason: Nullable(Str()), stop_sequence: Type.Optional(Nullable(Str())) }),
        usage: Obj({ output_tokens: Type.Number() }),
      }),
    ),
  ],
  ['message_stop', compile(Obj({ type: Type.Literal('message_stop') }))],
  ['ping', compile(Obj({ type: Type.Literal('ping') }))],
  ['error', compile(Obj({ type: Type.Literal('error'), error: Obj({ type: Str(), message: Str() }) }))],
]);

/** The event types of the Messages stream grammar; others are future additions and are skipped. */
export function isKnownEventType(type: string): boolean {
  return EVENT_VALIDATORS.has(type);
}

/**
 * Validates one stream event's payload against its type's shape. Unknown event types are reported as
 * `ok: true` with `known: false` by the caller's choice (see `isKnownEventType`).
 */
export function validateStreamEvent(
  value: unknown,
): Validated<MessageStreamEvent | { type: 'error'; error: { type: string; message: string } }> {
  if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') {
    return { ok: false, message: 'an event must be a JSON object with a string "type"' };
  }
  const type = (value as { type: string }).type;
  const validator = EVENT_VALIDATORS.get(type);
  if (validator === undefined) return { ok: false, message: `unknown event type "${type}"` };
  if (!validator.check(value))
    return { ok: false, message: `${type}: ${describeErrors(validator.errors(value))}` };
  if (type === 'content_block_start') {
    const block = (value as { content_block: { type: string } }).content_block;
    const blockValidator = RESPONSE_BLOCK_VALIDATORS.get(block.type);
    if (blockValidator !== undefined && !blockValidator.check(block)) {
      const detail = describeErrors(blockValidator.errors(block), 1, '/content_block');
      return { ok: false, message: `content_block_start: ${detail}` };
    }
  }
  if (type === 'content_block_delta') {
    const delta = (value as { delta: { type: string } }).delta;
    const deltaValidator = DELTA_VALIDATORS.get(delta.type);
    if (deltaValidator !== undefined && !deltaValidator.check(delta)) {
      return {
        ok: false,
        message: `content_block_delta: ${describeErrors(deltaValidator.errors(delta), 1, '/delta')}`,
      };
    }
  }
  return { ok: true, value: value as MessageStreamEvent };
}

export { formatPath };
