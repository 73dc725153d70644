/**
 * The native (`anthropic`) path and a tool input the token limit cut: a stream's `input_json_delta`
 * fragments that end mid-JSON are completed by appending one more fragment before the block stops (as
 * on the `tpx` path), only when the stop reason is `max_tokens`; fragments that are not even the
 * beginning of a JSON object are refused. A scripted server on 127.0.0.1 sends Anthropic's events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport, isTransportError, type ModelTransport } from '../../src/index.js';
import type { MessageStreamEvent } from '../../src/protocol/messages.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import {
  anthropicSse,
  messageStartEvent,
  startScriptedServer,
  step,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

let server: ScriptedServer | undefined;
let transport: ModelTransport | undefined;

afterEach(async () => {
  await transport?.close();
  await server?.close();
  transport = undefined;
  server = undefined;
});

/** A stream with one tool_use block whose input arrives as `fragments`, ending with `stopReason`. */
function cutToolStream(fragments: readonly string[], stopReason: 'max_tokens' | 'tool_use') {
  return [
    messageStartEvent('msg_01Cut'),
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_01Cut', name: 'get_weather', input: {} },
    },
    ...fragments.map((partial_json) => ({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json },
    })),
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 8 },
    },
    { type: 'message_stop' },
  ];
}

async function run(
  events: readonly { type: string }[],
): Promise<{ events: MessageStreamEvent[]; error: unknown }> {
  server = await startScriptedServer([step.sse(anthropicSse(events))]);
  transport = createTransport({
    env: {},
    anthropicApiKey: 'cut-test-key',
    anthropicBaseUrl: server.url,
    maxRetries: 0,
  });
  const received: MessageStreamEvent[] = [];
  try {
    for await (const event of transport.stream({
      model: 'claude-test',
      max_tokens: 8,
      stream: true,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    })) {
      received.push(event);
    }
    return { events: received, error: undefined };
  } catch (error) {
    return { events: received, error };
  }
}

const inputFragments = (events: readonly MessageStreamEvent[]) =>
  events.flatMap((event) =>
    event.type === 'content_block_delta' && event.delta.type === 'input_json_delta'
      ? [event.delta.partial_json]
      : [],
  );

describe('anthropic provider: a streamed tool input cut by max_tokens', () => {
  it('is completed by one appended fragment before the block stops', async () => {
    const { events, error } = await run(cutToolStream(['{"city":', '"Par'], 'max_tokens'));
    expect(error).toBeUndefined();
    expect(inputFragments(events)).toEqual(['{"city":', '"Par', '"}']);
    const stop = events.findIndex((event) => event.type === 'content_block_stop');
    expect(events[stop - 1]).toMatchObject({ type: 'content_block_delta', delta: { partial_json: '"}' } });
    const message = accumulateStream(events);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'toolu_01Cut', name: 'get_weather', input: { city: 'Par' } },
    ]);
  });

  it('is refused as MODEL_EPROTO when the stream ends for another reason', async () => {
    const { error } = await run(cutToolStream(['{"city":', '"Par'], 'tool_use'));
    expect(isTransportError(error) && error.code).toBe('MODEL_EPROTO');
    expect((error as Error).message).toMatch(/tool input for block 0 that is not a JSON object/);
  });

  it('is refused as MODEL_EPROTO, even at max_tokens, when it is not the beginning of a JSON object', async () => {
    const { events, error } = await run(cutToolStream(['[1,'], 'max_tokens'));
    expect(isTransportError(error) && error.code).toBe('MODEL_EPROTO');
    expect((error as Error).message).toMatch(/tool input for block 0 that is not a JSON object: "\[1,"/);
    // The caller never receives a block stop for input it could not parse.
    expect(events.some((event) => event.type === 'content_block_stop')).toBe(false);
  });

  it('is refused as MODEL_EPROTO when two blocks are cut: the limit cuts only the last', async () => {
    const events = cutToolStream(['{"city":"Par'], 'max_tokens');
    const second = [
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_02Cut', name: 'get_weather', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{"city":"Ro' },
      },
      { type: 'content_block_stop', index: 1 },
    ];
    const { error } = await run([...events.slice(0, 4), ...second, ...events.slice(4)]);
    expect(isTransportError(error) && error.code).toBe('MODEL_EPROTO');
    expect((error as Error).message).toMatch(/tool input for block 1 that is not a JSON object/);
  });
});
