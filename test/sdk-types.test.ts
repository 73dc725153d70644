/**
 * Compile-time conformance of our Messages wire types (`src/protocol/messages.ts`) with the official
 * `@anthropic-ai/sdk` 1.14 types, in the two directions that matter:
 *
 * - what a caller builds with the SDK's types (a request, content blocks) must be accepted by ours;
 * - what we deliver (a message, stream events) must be what the SDK's types describe, wherever the two
 *   describe the same thing; and whatever Anthropic sends (typed by the SDK) must fit ours, since the
 *   native provider passes it on.
 *
 * Every check is a type assertion: `npm test` type-checks this file, so a broken assignment fails the
 * build. The `it` blocks only make vitest count them. Where a direction does not hold on purpose, the
 * failing assignment is kept under `@ts-expect-error` with the reason, so that the day it starts to
 * hold, the build says so and the comment can go.
 */
import type * as Sdk from '@anthropic-ai/sdk/resources/messages/messages';
import { describe, expect, it } from 'vitest';
import type * as Ours from '../src/protocol/messages.js';
import type { MessagesRequestInput, ModelTransport } from '../src/transport/types.js';

/**
 * `assignableTo<To>()<From>()` compiles only when every `From` is a `To`; when it is not, the compiler
 * names the property that differs. It returns `true` at run time.
 */
const assignableTo =
  <To>() =>
  // The type parameter is the whole point: its constraint is the check.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  <From extends To>(): true =>
    true;

/**
 * `T` written as anonymous object types instead of interfaces, all the way down.
 *
 * The SDK declares its shapes as interfaces; ours carry `[key: string]: unknown` so that fields added to
 * the protocol later are kept. TypeScript gives an anonymous object type an implicit index signature and
 * an interface none, so an SDK *interface* is never assignable to one of our index-signature types, even
 * when every field matches (see the `@ts-expect-error` checks below). Comparing `Structural<SdkType>`
 * with ours compares the fields themselves: a field of the wrong type still fails.
 */
type Structural<T> = unknown extends T
  ? T
  : T extends string | number | boolean | bigint | symbol | null | undefined
    ? T
    : T extends (...args: never[]) => unknown
      ? T
      : { [K in keyof T]: Structural<T[K]> };

/** The SDK type with the fields real responses omit made optional (docs/protocol.md A.4). */
type WithOptional<T, Keys extends keyof T> = Omit<T, Keys> & Partial<Pick<T, Keys>>;

// ---------------------------------------------------------------------------------------------------
// Requests: what callers build with the SDK's types

/** SDK 1.14 toolsets: a versioned `type` and no `name` (see `ToolParam`'s doc comment). */
type SdkToolset = Sdk.BrowserToolset20260801 | Sdk.ComputerToolset20260801;

/**
 * The SDK's `tool_use` block with `input` as the protocol defines it. The SDK types `input` as `unknown`;
 * the protocol says a JSON object (docs/protocol.md A.2/A.4), and our validator rejects anything else, so our
 * type is stricter on purpose.
 */
type SdkToolUseBlockParamWithObjectInput = Omit<Sdk.ToolUseBlockParam, 'input'> & {
  input: Record<string, unknown>;
};

/** The SDK's request params, toolsets aside (their tools have no `name`; ours require one). */
type SdkParamsWithoutToolsets<Params extends Sdk.MessageCreateParamsBase> = Omit<Params, 'tools'> & {
  tools?: Exclude<Sdk.ToolUnion, SdkToolset>[];
};

/** Our request block of a given `type`, and the SDK's. */
type OurBlockParam<Type extends string> = Extract<Ours.ContentBlockParam, { type: Type }>;
type SdkBlockParam<Type extends string> = Extract<Sdk.ContentBlockParam, { type: Type }>;

describe('requests built with the SDK types are accepted by ours', () => {
  it('accepts an SDK non-streaming and streaming request, toolsets aside', () => {
    expect(
      assignableTo<Ours.MessagesRequest>()<
        Structural<SdkParamsWithoutToolsets<Sdk.MessageCreateParamsNonStreaming>>
      >(),
    ).toBe(true);
    expect(
      assignableTo<Ours.MessagesRequest>()<
        Structural<SdkParamsWithoutToolsets<Sdk.MessageCreateParamsStreaming>>
      >(),
    ).toBe(true);
  });

  it('does not accept an SDK-typed request value as it is, because of the index signatures', () => {
    // @ts-expect-error -- `MessageCreateParamsNonStreaming` is an interface: it has no implicit index
    // signature, and `MessagesRequest` has one (`[key: string]: unknown`, to keep unknown fields). A
    // caller holding an SDK-typed request must cast or spread it; see `Structural` above.
    expect(assignableTo<Ours.MessagesRequest>()<Sdk.MessageCreateParamsNonStreaming>()).toBe(true);
  });

  it('accepts every SDK message param, system messages included', () => {
    expect(assignableTo<Ours.MessageParam>()<Structural<Sdk.MessageParam>>()).toBe(true);
    expect(assignableTo<Ours.MessageParam>()<Structural<Sdk.SystemMessageParam>>()).toBe(true);
  });

  it('accepts every SDK content block param as one of ours or as an other block', () => {
    expect(
      assignableTo<Ours.ContentBlockParam | Ours.OtherBlock>()<Structural<Sdk.ContentBlockParam>>(),
    ).toBe(true);
  });

  it('accepts each SDK block param of a type we know as our block of that type', () => {
    expect(assignableTo<Ours.TextBlockParam>()<Structural<SdkBlockParam<'text'>>>()).toBe(true);
    expect(assignableTo<Ours.ImageBlockParam>()<Structural<SdkBlockParam<'image'>>>()).toBe(true);
    expect(assignableTo<Ours.DocumentBlockParam>()<Structural<SdkBlockParam<'document'>>>()).toBe(true);
    expect(assignableTo<Ours.ToolResultBlockParam>()<Structural<SdkBlockParam<'tool_result'>>>()).toBe(true);
    expect(assignableTo<Ours.ThinkingBlockParam>()<Structural<SdkBlockParam<'thinking'>>>()).toBe(true);
    expect(
      assignableTo<Ours.RedactedThinkingBlockParam>()<Structural<SdkBlockParam<'redacted_thinking'>>>(),
    ).toBe(true);
    expect(assignableTo<OurBlockParam<'tool_use'>>()<Structural<SdkToolUseBlockParamWithObjectInput>>()).toBe(
      true,
    );
  });

  it('accepts the SDK tool_use and tool_result block params', () => {
    expect(assignableTo<Ours.ToolUseBlockParam>()<Structural<SdkToolUseBlockParamWithObjectInput>>()).toBe(
      true,
    );
    expect(assignableTo<Ours.ToolResultBlockParam>()<Structural<Sdk.ToolResultBlockParam>>()).toBe(true);
    // @ts-expect-error -- the SDK types `tool_use.input` as `unknown`; ours is a JSON object, on purpose.
    expect(assignableTo<Ours.ToolUseBlockParam>()<Structural<Sdk.ToolUseBlockParam>>()).toBe(true);
  });

  it('accepts the SDK tools, tool choices, thinking configs and output config', () => {
    expect(assignableTo<Ours.ToolParam>()<Structural<Exclude<Sdk.ToolUnion, SdkToolset>>>()).toBe(true);
    // @ts-expect-error -- toolsets have no `name`; `ToolParam` requires one (the validator accepts a
    // nameless tool only with a versioned `type`).
    expect(assignableTo<Ours.ToolParam>()<Structural<SdkToolset>>()).toBe(true);
    expect(assignableTo<Ours.ToolChoice>()<Sdk.ToolChoice>()).toBe(true);
    expect(
      assignableTo<Extract<Ours.ThinkingConfig, { type: 'enabled' }>>()<
        Structural<Sdk.ThinkingConfigEnabled>
      >(),
    ).toBe(true);
    expect(
      assignableTo<Extract<Ours.ThinkingConfig, { type: 'adaptive' }>>()<
        Structural<Sdk.ThinkingConfigAdaptive>
      >(),
    ).toBe(true);
    expect(assignableTo<Ours.ThinkingConfig>()<Structural<Sdk.ThinkingConfigParam>>()).toBe(true);
    expect(
      assignableTo<NonNullable<Ours.MessagesRequest['output_config']>>()<Structural<Sdk.OutputConfig>>(),
    ).toBe(true);
    expect(assignableTo<NonNullable<Ours.MessagesRequest['metadata']>>()<Structural<Sdk.Metadata>>()).toBe(
      true,
    );
    expect(assignableTo<Ours.CacheControl>()<Sdk.CacheControlEphemeral>()).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------
// Responses: what we deliver, and what Anthropic sends

/**
 * Fields the SDK declares required (and nullable) that real responses leave out: `container`,
 * `stop_details`, `diagnostics` on a message, `caller` on a tool_use block, and the newer usage fields
 * (docs/protocol.md A.4, A.6; src/protocol/__fixtures__/reference-anthropic/vercel/sonnet-4.5.text.json has none of them). Our
 * types leave them out too; an SDK client reads them as `undefined`.
 */
type SdkClassicUsage = WithOptional<
  Sdk.Usage,
  | 'cache_creation'
  | 'cache_creation_input_tokens'
  | 'cache_read_input_tokens'
  | 'inference_geo'
  | 'output_tokens_details'
  | 'server_tool_use'
  | 'service_tier'
  | 'speed'
>;
type SdkClassicTextBlock = WithOptional<Sdk.TextBlock, 'citations'>;
type SdkClassicToolUseBlock = WithOptional<Sdk.ToolUseBlock, 'caller'>;
type SdkClassicContentBlock =
  SdkClassicTextBlock | Sdk.ThinkingBlock | Sdk.RedactedThinkingBlock | SdkClassicToolUseBlock;
type SdkClassicMessage = Omit<
  WithOptional<Sdk.Message, 'container' | 'stop_details' | 'diagnostics'>,
  'content' | 'usage'
> & { content: SdkClassicContentBlock[]; usage: SdkClassicUsage };
type SdkClassicDeltaUsage = WithOptional<
  Sdk.MessageDeltaUsage,
  | 'input_tokens'
  | 'cache_creation_input_tokens'
  | 'cache_read_input_tokens'
  | 'output_tokens_details'
  | 'server_tool_use'
>;

/**
 * The blocks we produce ourselves. An `OtherBlock` is only ever passed through from Anthropic, and so are
 * citations: ours carries them as `unknown[]` (never made on the translated path), the SDK as a union of
 * five citation shapes.
 */
type OurProducedBlock =
  Omit<Ours.TextBlock, 'citations'> | Ours.ThinkingBlock | Ours.RedactedThinkingBlock | Ours.ToolUseBlock;
/** Our message with only blocks we produce. (`Omit` would drop every named field of an index-signature type.) */
type OurClassicMessage = Ours.Message & { content: OurProducedBlock[] };

/** Our events, with our own blocks, as the SDK would type them. */
type OurEvent<Type extends Ours.MessageStreamEvent['type']> = Extract<
  Ours.MessageStreamEvent,
  { type: Type }
>;
type SdkEvent<Type extends Sdk.RawMessageStreamEvent['type']> = Extract<
  Sdk.RawMessageStreamEvent,
  { type: Type }
>;

describe('messages we deliver are SDK messages where the two describe the same thing', () => {
  it('our content blocks are SDK content blocks, less the fields responses omit', () => {
    expect(assignableTo<SdkClassicTextBlock>()<Omit<Ours.TextBlock, 'citations'>>()).toBe(true);
    expect(assignableTo<Sdk.ThinkingBlock>()<Ours.ThinkingBlock>()).toBe(true);
    expect(assignableTo<Sdk.RedactedThinkingBlock>()<Ours.RedactedThinkingBlock>()).toBe(true);
    expect(assignableTo<SdkClassicToolUseBlock>()<Ours.ToolUseBlock>()).toBe(true);
    expect(assignableTo<SdkClassicContentBlock>()<OurProducedBlock>()).toBe(true);
    // @ts-expect-error -- citations: ours are `unknown[]`, the SDK's a union of citation shapes (see above).
    expect(assignableTo<SdkClassicTextBlock>()<Ours.TextBlock>()).toBe(true);
  });

  it('our message is an SDK message, less the fields responses omit', () => {
    expect(assignableTo<SdkClassicMessage>()<OurClassicMessage>()).toBe(true);
    expect(assignableTo<SdkClassicUsage>()<Ours.Usage>()).toBe(true);
    expect(assignableTo<Sdk.StopReason>()<Ours.StopReason>()).toBe(true);
  });

  it('our stream events are SDK stream events, less ping and the fields responses omit', () => {
    expect(
      assignableTo<Omit<SdkEvent<'message_start'>, 'message'> & { message: SdkClassicMessage }>()<
        OurEvent<'message_start'> & { message: OurClassicMessage }
      >(),
    ).toBe(true);
    expect(
      assignableTo<
        Omit<SdkEvent<'content_block_start'>, 'content_block'> & { content_block: SdkClassicContentBlock }
      >()<Omit<OurEvent<'content_block_start'>, 'content_block'> & { content_block: OurProducedBlock }>(),
    ).toBe(true);
    // citations_delta: ours carries the citation as `unknown` (we never make one; the native path passes
    // Anthropic's on); the other four deltas coincide.
    expect(
      assignableTo<SdkEvent<'content_block_delta'>>()<
        Omit<OurEvent<'content_block_delta'>, 'delta'> & {
          delta: Exclude<Ours.ContentBlockDelta, { type: 'citations_delta' }>;
        }
      >(),
    ).toBe(true);
    expect(assignableTo<SdkEvent<'content_block_stop'>>()<OurEvent<'content_block_stop'>>()).toBe(true);
    expect(
      assignableTo<
        Omit<SdkEvent<'message_delta'>, 'delta' | 'usage'> & {
          delta: WithOptional<Sdk.RawMessageDeltaEvent.Delta, 'container' | 'stop_details'>;
          usage: SdkClassicDeltaUsage;
        }
      >()<OurEvent<'message_delta'>>(),
    ).toBe(true);
    expect(assignableTo<SdkEvent<'message_stop'>>()<OurEvent<'message_stop'>>()).toBe(true);
    // @ts-expect-error -- `ping` is a Messages stream event (docs/protocol.md A.7), but not in the SDK's
    // `RawMessageStreamEvent`: the SDK's stream reader skips it.
    expect(assignableTo<Sdk.RawMessageStreamEvent>()<Ours.PingEvent>()).toBe(true);
  });
});

describe('what Anthropic sends, as the SDK types it, fits our types', () => {
  it('accepts an SDK message and every SDK stream event', () => {
    expect(assignableTo<Ours.Message>()<Structural<Sdk.Message>>()).toBe(true);
    expect(assignableTo<Ours.MessageStreamEvent>()<Structural<Sdk.RawMessageStreamEvent>>()).toBe(true);
    expect(assignableTo<Ours.Usage>()<Structural<Sdk.Usage>>()).toBe(true);
    expect(assignableTo<Ours.MessageDeltaUsage>()<Structural<Sdk.MessageDeltaUsage>>()).toBe(true);
    expect(assignableTo<Ours.ContentBlockDelta>()<Sdk.RawContentBlockDelta>()).toBe(true);
    expect(assignableTo<Ours.StopReason>()<Sdk.StopReason>()).toBe(true);
  });

  it('accepts each SDK response block of a type we know as our block of that type', () => {
    expect(assignableTo<Ours.TextBlock>()<Structural<Sdk.TextBlock>>()).toBe(true);
    expect(assignableTo<Ours.ThinkingBlock>()<Sdk.ThinkingBlock>()).toBe(true);
    expect(assignableTo<Ours.RedactedThinkingBlock>()<Sdk.RedactedThinkingBlock>()).toBe(true);
    expect(
      assignableTo<Ours.ToolUseBlock>()<
        Structural<Omit<Sdk.ToolUseBlock, 'input'> & { input: Record<string, unknown> }>
      >(),
    ).toBe(true);
    // @ts-expect-error -- the SDK types `tool_use.input` as `unknown`; ours is a JSON object, on purpose
    // (the validator checks it). As part of a message, such a block still fits as an `OtherBlock`.
    expect(assignableTo<Ours.ToolUseBlock>()<Structural<Sdk.ToolUseBlock>>()).toBe(true);
  });
});

describe('the transport accepts SDK-typed requests', () => {
  it('takes an SDK MessageCreateParams value in send and stream without a cast', () => {
    expect(assignableTo<MessagesRequestInput>()<Sdk.MessageCreateParamsNonStreaming>()).toBe(true);
    expect(assignableTo<MessagesRequestInput>()<Sdk.MessageCreateParamsStreaming>()).toBe(true);
    type SendParameter = Parameters<ModelTransport['send']>[0];
    type StreamParameter = Parameters<ModelTransport['stream']>[0];
    expect(assignableTo<SendParameter>()<Sdk.MessageCreateParamsNonStreaming>()).toBe(true);
    expect(assignableTo<StreamParameter>()<Sdk.MessageCreateParamsStreaming>()).toBe(true);
    // @ts-expect-error -- a value without the required fields is still refused at compile time
    expect(assignableTo<SendParameter>()<{ model: string }>()).toBe(true);
  });
});
