import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  isKnownEventType,
  validateMessage,
  validateMessagesRequest,
  validateStreamEvent,
} from './validate-messages.js';

/** The recorded Anthropic wire data kept beside the protocol layer (`src/protocol/__fixtures__`). */
const FIXTURES = new URL('./__fixtures__/', import.meta.url);

function readFixture(path: string): string {
  return readFileSync(new URL(path, FIXTURES), 'utf8');
}

/** The JSON payload of every `data:` line of an SSE body (trailing whitespace after the JSON is allowed). */
function ssePayloads(body: string): unknown[] {
  return body
    .split(/\r\n|\r|\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice('data:'.length)) as unknown);
}

/** The message of a rejected value; fails the test when the value was accepted. */
function rejection(result: { ok: true } | { ok: false; message: string }): string {
  if (result.ok) throw new Error('expected the value to be rejected, but it was accepted');
  return result.message;
}

/** A small valid request to break one field of at a time. */
function baseRequest(): Record<string, unknown> {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    messages: [
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: '18°C' }] },
    ],
  };
}

/** A request shaped like the ones current agent CLIs and SDK 1.x send (docs/protocol.md A.1–A.3). */
function agentRequest(): Record<string, unknown> {
  return {
    model: 'claude-opus-4-8',
    max_tokens: 32000,
    stream: true,
    system: [
      { type: 'text', text: 'You are a coding agent.' },
      { type: 'text', text: 'Project notes…', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ],
    messages: [
      {
        role: 'user',
        content: [{ type: 'text', text: 'Fix the test.', cache_control: { type: 'ephemeral' } }],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Look at the file first.', signature: 'sig_abc' },
          { type: 'redacted_thinking', data: 'EuYBCkQYAiJA' },
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'read_file', input: { path: 'a.ts' } },
          { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'vitest' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01A',
            content: [
              { type: 'text', text: 'export const a = 1;' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
              { type: 'search_result', source: 'https://example.com', title: 'r', content: [] },
            ],
            cache_control: { type: 'ephemeral' },
          },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          { type: 'image', source: { type: 'file', file_id: 'file_011' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' }, title: 'n' },
          { type: 'tool_result', tool_use_id: 'srvtoolu_01' },
        ],
      },
      { role: 'system', content: 'The user prefers short answers.' },
      { role: 'user', content: 'Go on.' },
    ],
    tools: [
      {
        name: 'read_file',
        description: 'Reads a file',
        input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        cache_control: { type: 'ephemeral' },
      },
      { name: 'rarely_used', input_schema: { type: 'object' }, defer_loading: true, strict: true },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
      { type: 'browser_toolset_20260801' },
    ],
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    thinking: { type: 'adaptive', display: 'summarized' },
    output_config: { effort: 'high' },
    context_management: {
      edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 3 } }],
    },
    metadata: { user_id: 'user_0123' },
    cache_control: { type: 'ephemeral' },
    service_tier: 'auto',
    speed: 'fast',
    a_field_added_next_year: { anything: [1, 2, 3] },
  };
}

describe('validateMessagesRequest: requests real clients send', () => {
  it('accepts an agent request and returns the same object, untouched', () => {
    const request = agentRequest();
    const copy = structuredClone(request);
    const result = validateMessagesRequest(request);
    expect(result.ok).toBe(true);
    expect(result.ok && result.value).toBe(request);
    expect(request).toStrictEqual(copy);
  });

  it('keeps role "system" messages inside messages', () => {
    const result = validateMessagesRequest(agentRequest());
    expect(result.ok && result.value.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'system',
      'user',
    ]);
  });

  it('keeps unknown future fields and unknown block types', () => {
    const result = validateMessagesRequest(agentRequest());
    if (!result.ok) throw new Error(result.message);
    expect(result.value['a_field_added_next_year']).toEqual({ anything: [1, 2, 3] });
    expect(result.value['context_management']).toEqual({
      edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 3 } }],
    });
    const assistant = result.value.messages[1]!.content;
    expect(Array.isArray(assistant) && assistant[4]).toEqual({
      type: 'server_tool_use',
      id: 'srvtoolu_01',
      name: 'web_search',
      input: { query: 'vitest' },
    });
  });

  it('accepts thinking enabled with a budget, adaptive, and disabled', () => {
    for (const thinking of [
      { type: 'enabled', budget_tokens: 2048 },
      { type: 'enabled', budget_tokens: 2048, display: 'omitted' },
      { type: 'adaptive' },
      { type: 'adaptive', display: null },
      { type: 'disabled' },
    ]) {
      expect(validateMessagesRequest({ ...baseRequest(), thinking })).toMatchObject({ ok: true });
    }
  });

  it('accepts output_config with effort and a JSON schema format', () => {
    const output_config = {
      effort: 'max',
      format: { type: 'json_schema', schema: { type: 'object', properties: {} } },
    };
    expect(validateMessagesRequest({ ...baseRequest(), output_config })).toMatchObject({ ok: true });
  });

  it('accepts every tool_choice the protocol defines', () => {
    for (const tool_choice of [
      { type: 'auto' },
      { type: 'any', disable_parallel_tool_use: false },
      { type: 'tool', name: 'get_weather' },
      { type: 'none' },
    ]) {
      expect(validateMessagesRequest({ ...baseRequest(), tool_choice })).toMatchObject({ ok: true });
    }
  });

  it('accepts a toolset, which has a versioned type and no name', () => {
    const tools = [{ type: 'computer_toolset_20260801', configs: null }];
    expect(validateMessagesRequest({ ...baseRequest(), tools })).toMatchObject({ ok: true });
  });

  it('accepts a client tool typed "custom" or null', () => {
    const tools = [
      { type: 'custom', name: 'a', input_schema: { type: 'object' } },
      { type: null, name: 'b', input_schema: { type: 'object' } },
    ];
    expect(validateMessagesRequest({ ...baseRequest(), tools })).toMatchObject({ ok: true });
  });

  it('accepts max_tokens 0 (a cache warm-up) and a tool_result without content', () => {
    const request = baseRequest();
    request['max_tokens'] = 0;
    (request['messages'] as unknown[])[2] = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_01', is_error: true }],
    };
    expect(validateMessagesRequest(request)).toMatchObject({ ok: true });
  });
});

describe('validateMessagesRequest: bad requests are refused with the path of the field', () => {
  it('refuses a body that is not a JSON object', () => {
    for (const body of [null, undefined, 'model', 42, true]) {
      expect(rejection(validateMessagesRequest(body))).toBe('the request body must be a JSON object');
    }
  });

  it('refuses an array body, even one holding a valid request', () => {
    expect(rejection(validateMessagesRequest([]))).toBe('the request body must be a JSON object');
    expect(rejection(validateMessagesRequest([baseRequest()]))).toBe(
      'the request body must be a JSON object',
    );
  });

  it('names a missing model', () => {
    const request = baseRequest();
    delete request['model'];
    expect(rejection(validateMessagesRequest(request))).toBe('model: is required');
  });

  it('refuses an empty model', () => {
    expect(rejection(validateMessagesRequest({ ...baseRequest(), model: '' }))).toMatch(/^model: /);
  });

  it('refuses a negative, a fractional and a string max_tokens', () => {
    expect(rejection(validateMessagesRequest({ ...baseRequest(), max_tokens: -1 }))).toBe(
      'max_tokens: must be >= 0',
    );
    expect(rejection(validateMessagesRequest({ ...baseRequest(), max_tokens: 1.5 }))).toBe(
      'max_tokens: must be integer',
    );
    expect(rejection(validateMessagesRequest({ ...baseRequest(), max_tokens: '1024' }))).toBe(
      'max_tokens: must be integer',
    );
  });

  it('names a missing max_tokens and a missing messages', () => {
    const request = baseRequest();
    delete request['max_tokens'];
    delete request['messages'];
    expect(rejection(validateMessagesRequest(request))).toBe(
      'max_tokens: is required; messages: is required',
    );
  });

  it('refuses role "bot" and lists the roles there are', () => {
    const request = baseRequest();
    (request['messages'] as { role: string }[])[1]!.role = 'bot';
    expect(rejection(validateMessagesRequest(request))).toBe(
      'messages[1].role: must be one of "user", "assistant", "system"',
    );
  });

  it('refuses content that is neither a string nor an array', () => {
    const request = { ...baseRequest(), messages: [{ role: 'user', content: 42 }] };
    expect(rejection(validateMessagesRequest(request))).toBe('messages[0].content: must be string or array');
  });

  it('refuses a content block without a type', () => {
    const request = { ...baseRequest(), messages: [{ role: 'user', content: [{ text: 'hi' }] }] };
    expect(rejection(validateMessagesRequest(request))).toBe('messages[0].content[0].type: is required');
  });

  it('names a tool_use block without an id', () => {
    const request = baseRequest();
    const messages = request['messages'] as { content: Record<string, unknown>[] }[];
    delete messages[1]!.content[0]!['id'];
    expect(rejection(validateMessagesRequest(request))).toBe(
      'messages[1].content[0].id: is required (tool_use block)',
    );
  });

  it('refuses a tool_use input that is not an object', () => {
    const request = baseRequest();
    const messages = request['messages'] as { content: Record<string, unknown>[] }[];
    messages[1]!.content[0]!['input'] = ['Paris'];
    expect(rejection(validateMessagesRequest(request))).toMatch(/^messages\[1\]\.content\[0\]\.input: /);
  });

  it('refuses a tool_result whose content is a number', () => {
    const request = baseRequest();
    const messages = request['messages'] as { content: Record<string, unknown>[] }[];
    messages[2]!.content[0]!['content'] = 18;
    expect(rejection(validateMessagesRequest(request))).toBe(
      'messages[2].content[0].content: must be string or array (tool_result block)',
    );
  });

  it('checks the blocks inside a tool_result too', () => {
    const request = baseRequest();
    const messages = request['messages'] as { content: Record<string, unknown>[] }[];
    messages[2]!.content[0]!['content'] = [
      { type: 'text', text: 'ok' },
      { type: 'text', text: 18 },
    ];
    expect(rejection(validateMessagesRequest(request))).toBe(
      'messages[2].content[0].content[1].text: must be string (text block)',
    );
  });

  it('names the field of a thinking block left out', () => {
    const request = {
      ...baseRequest(),
      messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }] }],
    };
    expect(rejection(validateMessagesRequest(request))).toBe(
      'messages[0].content[0].signature: is required (thinking block)',
    );
  });

  it('names a client tool without a name', () => {
    const tools = [{ description: 'Reads a file', input_schema: { type: 'object' } }];
    expect(rejection(validateMessagesRequest({ ...baseRequest(), tools }))).toBe(
      'tools[0].name: is required',
    );
    const custom = [{ type: 'custom', input_schema: { type: 'object' } }];
    expect(rejection(validateMessagesRequest({ ...baseRequest(), tools: custom }))).toBe(
      'tools[0].name: is required',
    );
  });

  it('names the missing name of a tool_choice of type "tool"', () => {
    expect(rejection(validateMessagesRequest({ ...baseRequest(), tool_choice: { type: 'tool' } }))).toMatch(
      /^tool_choice\.name: /,
    );
  });

  it('lists the tool_choice types there are for an unknown one', () => {
    expect(rejection(validateMessagesRequest({ ...baseRequest(), tool_choice: { type: 'required' } }))).toBe(
      'tool_choice.type: must be one of "auto", "any", "none", "tool"',
    );
  });

  it('names the field of a system block that is wrong', () => {
    expect(rejection(validateMessagesRequest({ ...baseRequest(), system: [{ type: 'text' }] }))).toBe(
      'system[0].text: is required',
    );
  });

  it('refuses a metadata.user_id that is not a string', () => {
    expect(rejection(validateMessagesRequest({ ...baseRequest(), metadata: { user_id: 7 } }))).toBe(
      'metadata.user_id: must be string or null',
    );
  });
});

describe('validateMessage', () => {
  const recorded = (): unknown => JSON.parse(readFixture('reference-anthropic/vercel/sonnet-4.5.text.json'));

  it('accepts the recorded Anthropic response and returns the same object', () => {
    const message = recorded();
    const result = validateMessage(message);
    expect(result.ok).toBe(true);
    expect(result.ok && result.value).toBe(message);
  });

  it('accepts a message with thinking, tool_use and server-tool blocks and the newer null fields', () => {
    const message = {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-8',
      content: [
        { type: 'thinking', thinking: 'hm', signature: 'sig' },
        { type: 'text', text: 'Searching.', citations: null },
        {
          type: 'server_tool_use',
          id: 'srvtoolu_1',
          name: 'web_search',
          input: { query: 'x' },
          caller: null,
        },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      stop_details: null,
      container: null,
      usage: { input_tokens: 12, output_tokens: 30, server_tool_use: { web_search_requests: 1 } },
    };
    expect(validateMessage(message)).toMatchObject({ ok: true });
  });

  it('refuses a value that is not a message object', () => {
    for (const value of [null, 'message', 42, []]) expect(validateMessage(value).ok).toBe(false);
  });

  it('refuses the wrong type and role', () => {
    const message = recorded() as Record<string, unknown>;
    expect(rejection(validateMessage({ ...message, type: 'completion' }))).toBe('type: must be "message"');
    expect(rejection(validateMessage({ ...message, role: 'user' }))).toBe('role: must be "assistant"');
  });

  it('names missing and mistyped usage counts', () => {
    const message = recorded() as Record<string, unknown>;
    expect(rejection(validateMessage({ ...message, usage: { input_tokens: 12 } }))).toBe(
      'usage.output_tokens: is required',
    );
    expect(rejection(validateMessage({ ...message, usage: { input_tokens: '12', output_tokens: 1 } }))).toBe(
      'usage.input_tokens: must be number',
    );
  });

  it('names the field of a content block that is wrong', () => {
    const message = recorded() as Record<string, unknown>;
    expect(
      rejection(validateMessage({ ...message, content: [{ type: 'tool_use', id: 'toolu_1', name: 'f' }] })),
    ).toBe('content[0].input: is required (tool_use block)');
    expect(rejection(validateMessage({ ...message, content: [{ type: 'text', text: null }] }))).toBe(
      'content[0].text: must be string (text block)',
    );
    expect(rejection(validateMessage({ ...message, content: 'Hello' }))).toBe('content: must be array');
  });
});

describe('validateStreamEvent', () => {
  const sseFixtures = readdirSync(new URL('reference-anthropic/anthropic-sdk-ts/', FIXTURES)).filter((name) =>
    name.endsWith('.sse'),
  );

  it('finds the recorded SDK streams', () => {
    expect(sseFixtures).toEqual(
      expect.arrayContaining(['basic-text.sse', 'tool-use.sse', 'incomplete-partial-json.sse']),
    );
  });

  it.each(sseFixtures)('accepts every event of the recorded stream %s', (name) => {
    const events = ssePayloads(readFixture(`reference-anthropic/anthropic-sdk-ts/${name}`));
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) expect(validateStreamEvent(event)).toEqual({ ok: true, value: event });
  });

  it.each(['sonnet-4.5.text', 'sonnet-4.5.thinking', 'sonnet-4.5.tool-no-args', 'haiku-4.5.json-tool'])(
    'accepts every event of the recorded stream %s.chunks.jsonl',
    (name) => {
      const lines = readFixture(`reference-anthropic/vercel/${name}.chunks.jsonl`).split('\n');
      const events = lines.filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as unknown);
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) expect(validateStreamEvent(event)).toMatchObject({ ok: true });
    },
  );

  it('accepts an error event', () => {
    const event = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    expect(validateStreamEvent(event)).toEqual({ ok: true, value: event });
  });

  it('names a delta field of the wrong type', () => {
    const event = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 5 } };
    expect(rejection(validateStreamEvent(event))).toBe('content_block_delta: delta.text: must be string');
  });

  it('names the field a delta lacks', () => {
    const event = { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta' } };
    expect(rejection(validateStreamEvent(event))).toBe(
      'content_block_delta: delta.partial_json: is required',
    );
    const signature = {
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'signature_delta', text: 's' },
    };
    expect(rejection(validateStreamEvent(signature))).toBe(
      'content_block_delta: delta.signature: is required',
    );
  });

  it('accepts a delta type from the future (Anthropic adds them often; clients skip them)', () => {
    const event = { type: 'content_block_delta', index: 0, delta: { type: 'audio_delta', data: '' } };
    expect(validateStreamEvent(event)).toEqual({ ok: true, value: event });
    // A known delta type is still checked field by field.
    expect(
      rejection(
        validateStreamEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta' } }),
      ),
    ).toMatch(/^content_block_delta: /);
  });

  it('refuses a negative or fractional index', () => {
    const delta = { type: 'text_delta', text: 'a' };
    expect(rejection(validateStreamEvent({ type: 'content_block_delta', index: -1, delta }))).toBe(
      'content_block_delta: index: must be >= 0',
    );
    expect(rejection(validateStreamEvent({ type: 'content_block_stop', index: 0.5 }))).toBe(
      'content_block_stop: index: must be integer',
    );
  });

  it('names the field of a content_block_start block that is wrong', () => {
    const event = {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'f' },
    };
    expect(rejection(validateStreamEvent(event))).toBe(
      'content_block_start: content_block.input: is required',
    );
  });

  it('refuses a message_delta without output_tokens', () => {
    const event = {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: {},
    };
    expect(rejection(validateStreamEvent(event))).toBe('message_delta: usage.output_tokens: is required');
  });

  it('refuses an event type it does not know, and a value that is not an event', () => {
    expect(rejection(validateStreamEvent({ type: 'message_pause' }))).toBe(
      'unknown event type "message_pause"',
    );
    for (const value of [null, 'ping', 1, {}, { type: 7 }]) {
      expect(rejection(validateStreamEvent(value))).toBe(
        'an event must be a JSON object with a string "type"',
      );
    }
  });
});

describe('isKnownEventType', () => {
  it('knows the events of the stream grammar, ping and error included', () => {
    for (const type of [
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
      'ping',
      'error',
    ]) {
      expect(isKnownEventType(type)).toBe(true);
    }
  });

  it('does not know event types added later, which readers skip', () => {
    expect(isKnownEventType('message_pause')).toBe(false);
    expect(isKnownEventType('constructor')).toBe(false);
  });
});
