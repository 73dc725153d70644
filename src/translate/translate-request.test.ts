import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertValidChatCompletionRequest } from '../../test/helpers/chat-schema.js';
import { TransportError, isTransportError } from '../errors.js';
import type { ChatCompletionRequest, ChatMessage } from '../protocol/chat-completions.js';
import type {
  ContentBlockParam,
  MessageParam,
  MessagesRequest,
  OtherBlock,
  ToolResultContentBlock,
} from '../protocol/messages.js';
import { checkPairing } from './check-pairing.js';
import { DIALECTS } from './dialects.js';
import { decodeToolId, encodeToolId, encodeToolIds } from './tool-id-codec.js';
import { encodeToolName } from './tool-name-codec.js';
import {
  translateRequest,
  type TranslateRequestOptions,
  type TranslatedRequest,
} from './translate-request.js';

const UPSTREAM_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Translates, then checks the body against the OpenAI schema and the function-name rule. */
function translated(request: MessagesRequest, options?: TranslateRequestOptions): TranslatedRequest {
  const before = structuredClone(request);
  const result = translateRequest(request, options);
  assertValidChatCompletionRequest(result.body);
  for (const tool of result.body.tools ?? []) expect(tool.function.name).toMatch(UPSTREAM_NAME);
  for (const message of result.body.messages) {
    if (message.role !== 'assistant') continue;
    for (const call of message.tool_calls ?? []) expect(call.function.name).toMatch(UPSTREAM_NAME);
  }
  // Pure: the caller's request is left as it was.
  expect(request).toEqual(before);
  return result;
}

function translate(request: MessagesRequest, options?: TranslateRequestOptions): ChatCompletionRequest {
  return translated(request, options).body;
}

/** The message of the `MODEL_EINVAL` error the translation throws. */
function refusal(request: MessagesRequest, options?: TranslateRequestOptions): string {
  try {
    translateRequest(request, options);
  } catch (error) {
    if (isTransportError(error) && error.code === 'MODEL_EINVAL') return error.message;
    throw error;
  }
  throw new Error('the request was translated');
}

function request(overrides: Partial<MessagesRequest> = {}): MessagesRequest {
  return { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...overrides };
}

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  input_schema: { type: 'object', properties: {} },
  ...extra,
});

describe('translateRequest: top-level fields', () => {
  it('maps a minimal request to model, messages and max_tokens', () => {
    expect(translate(request())).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
    });
  });

  it('sends the model from the options instead of the request model', () => {
    expect(translate(request(), { model: 'qwen3' })).toEqual({
      model: 'qwen3',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
    });
  });

  it('sends max_tokens as max_completion_tokens when asked to', () => {
    expect(translate(request(), { maxTokensField: 'max_completion_tokens' })).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 100,
    });
  });

  it('refuses max_tokens 0, which only warms the prompt cache', () => {
    expect(refusal(request({ max_tokens: 0 }))).toBe(
      'max_tokens: 0 asks only to warm the prompt cache, which OpenAI-compatible servers cannot do; ' +
        'send max_tokens of 1 or more',
    );
  });

  it('passes temperature and top_p and drops top_k', () => {
    expect(translate(request({ temperature: 0.3, top_p: 0.9, top_k: 40 }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      temperature: 0.3,
      top_p: 0.9,
    });
  });

  it('passes a temperature and a top_p of 0 on, rather than dropping them as unset', () => {
    expect(translate(request({ temperature: 0, top_p: 0 }))).toStrictEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      temperature: 0,
      top_p: 0,
    });
  });

  it('maps stop_sequences to stop', () => {
    expect(translate(request({ stop_sequences: ['END', '###'] }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      stop: ['END', '###'],
    });
  });

  it('omits an empty stop_sequences array', () => {
    expect(translate(request({ stop_sequences: [] }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
    });
  });

  it('refuses more than four stop sequences', () => {
    expect(refusal(request({ stop_sequences: ['a', 'b', 'c', 'd', 'e'] }))).toBe(
      'stop_sequences has 5 entries, but OpenAI-compatible servers accept at most 4 stop sequences; send 4 or fewer',
    );
  });

  it('accepts exactly four stop sequences, the most OpenAI-compatible servers take', () => {
    expect(translate(request({ stop_sequences: ['a', 'b', 'c', 'd'] })).stop).toStrictEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
  });

  it('maps stream to stream with usage requested', () => {
    expect(translate(request({ stream: true }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(translate(request({ stream: false }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
    });
  });

  it('maps metadata.user_id to user', () => {
    expect(translate(request({ metadata: { user_id: 'user-42' } }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      user: 'user-42',
    });
  });

  it('sends no user field for an empty metadata.user_id', () => {
    expect(translate(request({ metadata: { user_id: '' } }))).toStrictEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
    });
  });

  it('replaces a user_id longer than 64 characters by its sha256 hex digest', () => {
    const long = 'u'.repeat(65);
    expect(translate(request({ metadata: { user_id: long } }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      user: createHash('sha256').update(long).digest('hex'),
    });
    expect(translate(request({ metadata: { user_id: 'u'.repeat(64) } })).user).toBe('u'.repeat(64));
  });

  it('drops service_tier, container, context_management, mcp_servers, inference_geo, diagnostics, speed and cache_control', () => {
    expect(
      translate(
        request({
          service_tier: 'auto',
          container: 'container_1',
          context_management: { edits: [] },
          mcp_servers: [{ type: 'url', url: 'https://example.com', name: 'x' }],
          inference_geo: 'us',
          diagnostics: { enabled: true },
          speed: 'fast',
          cache_control: { type: 'ephemeral' },
          user_profile_id: 'p',
          metadata: { user_id: null },
        }),
      ),
    ).toEqual({ model: 'claude-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 });
  });

  it('refuses a request without messages', () => {
    expect(refusal(request({ messages: [] }))).toBe('messages must contain at least one message');

    expect(refusal(request({ messages: [{ role: 'assistant', content: ' ' }] }))).toBe(
      'messages holds nothing to send: its only message is a blank assistant message',
    );
  });
});

describe('translateRequest: reasoning and output format', () => {
  it('sends the effort of the thinking budget as reasoning_effort (the rules: read-effort.test.ts)', () => {
    expect(translate(request({ thinking: { type: 'enabled', budget_tokens: 16384 } }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      reasoning_effort: 'high',
    });
  });

  it('maps adaptive thinking to medium effort', () => {
    expect(translate(request({ thinking: { type: 'adaptive' } })).reasoning_effort).toBe('medium');
  });

  it('omits reasoning_effort for disabled thinking and for thinking types it does not know', () => {
    const plain = { model: 'claude-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 };
    expect(translate(request({ thinking: { type: 'disabled' } }))).toEqual(plain);
    expect(translate(request({ thinking: { type: 'between_tools' } }))).toEqual(plain);
  });

  it('sends output_config.effort as reasoning_effort, its top levels as high', () => {
    expect(translate(request({ output_config: { effort: 'xhigh' } }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      reasoning_effort: 'high',
    });
    expect(translate(request({ output_config: { effort: 'low' } })).reasoning_effort).toBe('low');
  });

  it('lets output_config.effort win over the thinking budget', () => {
    const body = translate(
      request({ thinking: { type: 'enabled', budget_tokens: 1024 }, output_config: { effort: 'max' } }),
    );
    expect(body.reasoning_effort).toBe('high');
  });

  it('refuses an unknown output_config.effort', () => {
    expect(refusal(request({ output_config: { effort: 'extreme' } }))).toBe(
      'output_config.effort "extreme" is not one of "low", "medium", "high", "xhigh", "max"',
    );
  });

  it('reads output_config.effort: null as absent, so the thinking budget decides', () => {
    const body = translate(
      request({
        thinking: { type: 'enabled', budget_tokens: 5000 },
        output_config: { effort: null },
      }),
    );
    expect(body.reasoning_effort).toBe('medium');
  });

  it('refuses enabled thinking whose budget_tokens is not a number (the cases: read-effort.test.ts)', () => {
    expect(
      refusal(request({ thinking: { type: 'enabled', budget_tokens: 'lots' as unknown as number } })),
    ).toBe('thinking.budget_tokens must be a number when thinking.type is "enabled"');
  });

  it('maps a json_schema output format to response_format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    expect(translate(request({ output_config: { format: { type: 'json_schema', schema } } }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } },
    });
  });

  it('refuses an output format that is not json_schema', () => {
    expect(refusal(request({ output_config: { format: { type: 'xml' } } }))).toBe(
      'output_config.format of type "xml" cannot be translated; only {"type": "json_schema", "schema": {…}} ' +
        'has a Chat Completions equivalent (response_format)',
    );
  });
});

describe('translateRequest: tools', () => {
  it('maps client tools with description, parameters and strict, and drops the rest', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    expect(
      translate(
        request({
          tools: [
            {
              name: 'get_weather',
              description: 'Weather now',
              input_schema: schema,
              strict: true,
              cache_control: { type: 'ephemeral' },
              defer_loading: false,
              input_examples: [{ city: 'Paris' }],
            },
            { name: 'ping', type: 'custom', input_schema: { type: 'object' }, strict: 'yes' },
          ],
        }),
      ),
    ).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather now', parameters: schema, strict: true },
        },
        { type: 'function', function: { name: 'ping', parameters: { type: 'object' } } },
      ],
    });
  });

  it('refuses a server tool, naming it and its type', () => {
    expect(
      refusal(request({ tools: [tool('ok'), { name: 'web_search', type: 'web_search_20250305' }] })),
    ).toBe(
      'tools[1] ("web_search") has type "web_search_20250305": a server tool that runs on Anthropic\'s side, ' +
        'which an OpenAI-compatible server cannot run; remove it, or use the anthropic provider',
    );
  });

  it.each([
    [{ type: 'auto' } as const, 'auto'],
    [{ type: 'any' } as const, 'required'],
    [{ type: 'none' } as const, 'none'],
    [{ type: 'tool', name: 'lookup' } as const, { type: 'function', function: { name: 'lookup' } }],
  ])('maps tool_choice %j to %j', (choice, expected) => {
    expect(translate(request({ tools: [tool('lookup')], tool_choice: choice }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      tools: [
        { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: expected,
    });
  });

  it('maps disable_parallel_tool_use to parallel_tool_calls false', () => {
    expect(
      translate(
        request({ tools: [tool('lookup')], tool_choice: { type: 'any', disable_parallel_tool_use: true } }),
      ),
    ).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      tools: [
        { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
  });

  it('omits tool_choice auto or none, and parallel_tool_calls, when there are no tools', () => {
    const plain = { model: 'claude-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 };
    expect(translate(request({ tool_choice: { type: 'auto', disable_parallel_tool_use: true } }))).toEqual(
      plain,
    );
    expect(translate(request({ tools: [], tool_choice: { type: 'none' } }))).toEqual(plain);
  });

  it('refuses tool_choice any without tools', () => {
    expect(refusal(request({ tool_choice: { type: 'any' } }))).toBe(
      'tool_choice {"type": "any"} requires at least one tool in tools',
    );
  });

  it('refuses tool_choice naming a tool that is not offered', () => {
    expect(refusal(request({ tools: [tool('a')], tool_choice: { type: 'tool', name: 'b' } }))).toBe(
      'tool_choice names the tool "b", which is not in tools',
    );
  });

  it('encodes a tool name over 64 characters the same way in tools, tool_choice and tool_use', () => {
    const long = `mcp__server__${'x'.repeat(100)}`;
    const upstream = encodeToolName(long);
    const { body, toolNames } = translated(
      request({
        tools: [tool(long)],
        tool_choice: { type: 'tool', name: long },
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: long, input: { a: 1 } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'done' }] },
        ],
      }),
    );
    expect(body).toEqual({
      model: 'claude-test',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: upstream, arguments: '{"a":1}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'done' },
      ],
      tools: [
        { type: 'function', function: { name: upstream, parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: { type: 'function', function: { name: upstream } },
    });
    expect(toolNames.fromUpstream(upstream)).toBe(long);
  });

  it('refuses two tools that would reach the provider under one name', () => {
    const long = 'n'.repeat(70);
    expect(refusal(request({ tools: [tool(long), tool(encodeToolName(long))] }))).toContain(
      'would both be sent to the provider as the function name',
    );
  });
});

describe('translateRequest: system prompts', () => {
  it('maps a string system prompt to a leading system message', () => {
    expect(translate(request({ system: 'Be terse.' })).messages).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('joins system text blocks with a blank line and drops their cache_control', () => {
    expect(
      translate(
        request({
          system: [
            { type: 'text', text: 'One.' },
            { type: 'text', text: 'Two.', cache_control: { type: 'ephemeral', ttl: '1h' } },
          ],
        }),
      ).messages,
    ).toEqual([
      { role: 'system', content: 'One.\n\nTwo.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('omits an empty system prompt', () => {
    expect(translate(request({ system: '' })).messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(translate(request({ system: [] })).messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('keeps system messages inside messages at their position', () => {
    expect(
      translate(
        request({
          system: 'top',
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: 'b' },
            {
              role: 'system',
              content: [
                { type: 'text', text: 'mid' },
                { type: 'text', text: 'dle' },
              ],
            },
            { role: 'user', content: 'c' },
          ],
        }),
      ).messages,
    ).toEqual([
      { role: 'system', content: 'top' },
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'system', content: 'mid\n\ndle' },
      { role: 'user', content: 'c' },
    ]);
  });

  it('refuses a non-text block in a system message, naming its position', () => {
    expect(
      refusal(
        request({
          messages: [
            { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
            { role: 'user', content: 'hi' },
          ],
        }),
      ),
    ).toBe('messages[0].content[0] is a "image" block in a system message; only text can be translated');
  });

  it('refuses a text block in a system message whose text is not a string, saying so', () => {
    expect(
      refusal(
        request({
          messages: [
            {
              role: 'system',
              content: [
                { type: 'text', text: 'fine' },
                { type: 'text', text: 7 },
              ],
            },
            { role: 'user', content: 'hi' },
          ],
        }),
      ),
    ).toBe('messages[0].content[1].text must be a string (a text block in a system message)');
  });
});

describe('translateRequest: user content', () => {
  it('merges consecutive user messages into one user message', () => {
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'one' },
            { role: 'user', content: [{ type: 'text', text: 'two', cache_control: { type: 'ephemeral' } }] },
          ],
        }),
      ).messages,
    ).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
    ]);
  });

  it('sends a user message with a single text block as a plain string', () => {
    expect(
      translate(request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'solo' }] }] }))
        .messages,
    ).toEqual([{ role: 'user', content: 'solo' }]);
  });

  it('sends an empty user message as an empty string', () => {
    expect(translate(request({ messages: [{ role: 'user', content: [] }] })).messages).toEqual([
      { role: 'user', content: '' },
    ]);
  });

  it('maps base64 and url images to image_url parts', () => {
    expect(
      translate(
        request({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'look' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
                { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
              ],
            },
          ],
        }),
      ).messages,
    ).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  it('refuses an image whose source is neither base64 nor url', () => {
    expect(
      refusal(
        request({
          messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }],
        }),
      ),
    ).toBe(
      'messages[0].content[0]: an image with source type "file" cannot be translated; use a base64 or url source',
    );
  });

  it('maps a plain-text document to a text part with its title on the first line', () => {
    expect(
      translate(
        request({
          messages: [
            {
              role: 'user',
              content: [
                {
                  type: 'document',
                  title: 'Notes',
                  source: { type: 'text', media_type: 'text/plain', data: 'body' },
                },
                { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'untitled' } },
              ],
            },
          ],
        }),
      ).messages,
    ).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Notes\nbody' },
          { type: 'text', text: 'untitled' },
        ],
      },
    ]);
  });

  it('refuses a PDF document where the dialect takes no files, naming its position and the dialect', () => {
    expect(
      refusal(
        request({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'read this' },
                {
                  type: 'document',
                  source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
                },
              ],
            },
          ],
        }),
        { dialect: DIALECTS.llamacpp },
      ),
    ).toBe(
      'messages[0].content[1]: a document block holding a base64 PDF cannot be sent to llama.cpp server ' +
        '(dialect "llamacpp"), which takes no file content parts; send the text of the document (source type ' +
        '"text"), or use the anthropic provider',
    );
  });

  it.each(['server_tool_use', 'web_search_tool_result', 'container_upload', 'some_future_block'])(
    'refuses a %s block, naming its type and position',
    (type) => {
      const block: OtherBlock = { type, id: 'x' };
      expect(
        refusal(
          request({
            messages: [
              { role: 'user', content: 'hi' },
              { role: 'assistant', content: 'hello' },
              { role: 'user', content: [{ type: 'text', text: 'x' }, block] },
            ],
          }),
        ),
      ).toBe(
        `messages[2].content[1]: a "${type}" block cannot be translated to Chat Completions; remove it, or use the anthropic provider`,
      );
    },
  );

  it('refuses assistant-only blocks in a user message', () => {
    expect(
      refusal(
        request({
          messages: [{ role: 'user', content: [{ type: 'thinking', thinking: 't', signature: 's' }] }],
        }),
      ),
    ).toBe('messages[0].content[0]: thinking blocks belong in assistant messages, not user messages');
  });
});

describe('translateRequest: tool results', () => {
  const toolTurn: MessageParam = {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'call_a', name: 'lookup', input: { q: 'a' } },
      { type: 'tool_use', id: 'call_b', name: 'lookup', input: { q: 'b' } },
    ],
  };
  const toolCalls = [
    { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"a"}' } },
    { id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '{"q":"b"}' } },
  ];

  it('emits one tool message per tool_result before the rest of the user turn', () => {
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            toolTurn,
            {
              role: 'user',
              content: [
                { type: 'text', text: 'here you go' },
                { type: 'tool_result', tool_use_id: 'call_b', content: 'B' },
                { type: 'tool_result', tool_use_id: 'call_a', content: [{ type: 'text', text: 'A' }] },
              ],
            },
          ],
        }),
      ).messages,
    ).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: toolCalls },
      { role: 'tool', tool_call_id: 'call_b', content: 'B' },
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'user', content: 'here you go' },
    ]);
  });

  it('joins tool_result text blocks with a newline and sends missing or empty content as ""', () => {
    const linesAndDocument: ToolResultContentBlock[] = [
      { type: 'text', text: 'line 1' },
      { type: 'text', text: 'line 2' },
      { type: 'document', title: 'T', source: { type: 'text', media_type: 'text/plain', data: 'D' } },
    ];
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            toolTurn,
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 'call_a', content: linesAndDocument },
                { type: 'tool_result', tool_use_id: 'call_b' },
              ],
            },
          ],
        }),
      ).messages.slice(2),
    ).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: 'line 1\nline 2\nT\nD' },
      { role: 'tool', tool_call_id: 'call_b', content: '' },
    ]);
  });

  it('prefixes the content of an error tool_result with "[tool error] "', () => {
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            toolTurn,
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 'call_a', content: 'not found', is_error: true },
                { type: 'tool_result', tool_use_id: 'call_b', content: [], is_error: false },
              ],
            },
          ],
        }),
      ).messages.slice(2),
    ).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: '[tool error] not found' },
      { role: 'tool', tool_call_id: 'call_b', content: '' },
    ]);
  });

  it('moves images of a tool_result to a user message right after the tool messages', () => {
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            toolTurn,
            {
              role: 'user',
              content: [
                {
                  type: 'tool_result',
                  tool_use_id: 'call_a',
                  content: [
                    { type: 'text', text: 'screenshot:' },
                    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
                  ],
                },
                { type: 'tool_result', tool_use_id: 'call_b', content: 'plain' },
                { type: 'text', text: 'what do you see?' },
              ],
            },
          ],
        }),
      ).messages.slice(2),
    ).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: 'screenshot:' },
      { role: 'tool', tool_call_id: 'call_b', content: 'plain' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images from the result of tool call call_a:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
      { role: 'user', content: 'what do you see?' },
    ]);
  });

  it('refuses a block inside a tool_result that has no text form, naming its position', () => {
    expect(
      refusal(
        request({
          messages: [
            { role: 'user', content: 'go' },
            toolTurn,
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 'call_a', content: 'ok' },
                {
                  type: 'tool_result',
                  tool_use_id: 'call_b',
                  content: [{ type: 'future_block', detail: 't' }],
                },
              ],
            },
          ],
        }),
      ),
    ).toBe(
      'messages[2].content[1].content[0]: a "future_block" block inside a tool_result cannot be translated to Chat ' +
        'Completions; remove it, or use the anthropic provider',
    );
  });

  it('sends a tool_reference inside a tool_result as a line naming the tool, as the upstream knows it', () => {
    const body = translate(
      request({
        messages: [
          { role: 'user', content: 'go' },
          toolTurn,
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'call_a', content: 'ok' },
              {
                type: 'tool_result',
                tool_use_id: 'call_b',
                content: [
                  { type: 'tool_reference', tool_name: 'get_weather' },
                  { type: 'tool_reference', tool_name: 'not_offered' },
                ],
              },
            ],
          },
        ],
      }),
    );
    expect(body.messages.filter((message) => message.role === 'tool')).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: 'ok' },
      {
        role: 'tool',
        tool_call_id: 'call_b',
        content: 'Tool available: get_weather\nTool available: not_offered',
      },
    ]);
  });

  it('decodes caller tool ids back to the provider ids in tool calls and tool messages', () => {
    const providerId = 'functions.read:0';
    const callerId = encodeToolId(providerId, 1, () => 'unused');
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: [{ type: 'tool_use', id: callerId, name: 'read', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: callerId, content: '1' }] },
          ],
        }),
      ).messages.slice(1),
    ).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: providerId, type: 'function', function: { name: 'read', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: providerId, content: '1' },
    ]);
  });

  it('sends a repeated provider id back the first time as given and the second time under the id the caller was shown', () => {
    const providerId = 'functions.read:0';
    const callerId = encodeToolId(providerId, 1, () => 'unused');
    const repeatedId = encodeToolId(providerId, 2, () => 'unused');
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            {
              role: 'assistant',
              content: [
                { type: 'tool_use', id: callerId, name: 'read', input: {} },
                { type: 'tool_use', id: repeatedId, name: 'read', input: {} },
              ],
            },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: repeatedId, content: '2' },
                { type: 'tool_result', tool_use_id: callerId, content: '1' },
              ],
            },
          ],
        }),
      ).messages.slice(1),
    ).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: providerId, type: 'function', function: { name: 'read', arguments: '{}' } },
          { id: repeatedId, type: 'function', function: { name: 'read', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: repeatedId, content: '2' },
      { role: 'tool', tool_call_id: providerId, content: '1' },
    ]);
  });

  it('refuses two caller tool ids made up to decode to one provider id, rather than send it twice', () => {
    const repeatedId = encodeToolId('functions.read:0', 2, () => 'unused');
    const lookalike = encodeToolId(repeatedId, 1, () => 'unused');
    const call = () =>
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            {
              role: 'assistant',
              content: [
                { type: 'tool_use', id: repeatedId, name: 'read', input: {} },
                { type: 'tool_use', id: lookalike, name: 'read', input: {} },
              ],
            },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: repeatedId, content: '1' },
                { type: 'tool_result', tool_use_id: lookalike, content: '2' },
              ],
            },
          ],
        }),
      );
    expect(call).toThrow(TransportError);
    expect(call).toThrow(`both stand for the upstream tool-call id ${JSON.stringify(repeatedId)}`);
  });

  it('places system messages between a tool call and its results after the tool messages', () => {
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            toolTurn,
            { role: 'system', content: 'reminder' },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 'call_a', content: 'A' },
                { type: 'tool_result', tool_use_id: 'call_b', content: 'B' },
                { type: 'text', text: 'next' },
              ],
            },
          ],
        }),
      ).messages,
    ).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: toolCalls },
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_b', content: 'B' },
      { role: 'system', content: 'reminder' },
      { role: 'user', content: 'next' },
    ]);
  });

  it('refuses a tool_result block in an assistant message', () => {
    expect(
      refusal(
        request({
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 'x', content: '' }] },
            { role: 'user', content: 'and?' },
          ],
        }),
      ),
    ).toBe('messages[1].content[0]: tool_result blocks belong in user messages, not assistant messages');
  });
});

describe('translateRequest: assistant content', () => {
  it('joins assistant text blocks with a blank line and keeps text next to tool calls', () => {
    expect(
      translate(
        request({
          tools: [tool('lookup')],
          messages: [
            { role: 'user', content: 'go' },
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'Let me check.' },
                { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x', n: [1, 2] } },
              ],
            },
            { role: 'assistant', content: 'Also this.' },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'found' }] },
          ],
        }),
      ).messages,
    ).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'Let me check.\n\nAlso this.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x","n":[1,2]}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'found' },
    ]);
  });

  it('maps thinking blocks to reasoning_content and drops redacted_thinking', () => {
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: 'first', signature: 'sig1' },
                { type: 'redacted_thinking', data: 'opaque' },
                { type: 'thinking', thinking: 'second', signature: 'sig2' },
                { type: 'text', text: 'answer' },
              ],
            },
            { role: 'user', content: 'ok' },
          ],
        }),
      ).messages,
    ).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'answer', reasoning_content: 'first\n\nsecond' },
      { role: 'user', content: 'ok' },
    ]);
  });

  it('sends an assistant turn without text or tool calls with empty content', () => {
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'opaque' }] },
            { role: 'user', content: 'ok' },
          ],
        }),
      ).messages,
    ).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'ok' },
    ]);
  });

  it('refuses an image in an assistant message', () => {
    expect(
      refusal(
        request({
          messages: [
            { role: 'user', content: 'go' },
            {
              role: 'assistant',
              content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }],
            },
            { role: 'user', content: 'ok' },
          ],
        }),
      ),
    ).toBe('messages[1].content[0]: Chat Completions does not accept images in assistant messages');
  });

  it('drops a final assistant message that is only whitespace', () => {
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: [{ type: 'text', text: ' \n' }] },
            { role: 'assistant', content: '' },
          ],
        }),
      ).messages,
    ).toEqual([{ role: 'user', content: 'hi' }]);
  });
});

// ---------------------------------------------------------------------------------------------------
// Property: tool ids, tool names and pairing survive translation for any valid conversation.

/** Messages tool names, long ones (over the 64-character upstream limit) often. */
const toolName = fc.oneof(
  fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/),
  fc.stringMatching(/^[a-zA-Z0-9_-]{65,128}$/),
);

/** Provider tool-call ids of any shape, repeats and empties included. */
const providerId = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,30}$/),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('', 'call_0', 'functions.read:0', 'tpx_eYQ'),
);

interface GeneratedCall {
  providerId: string;
  name: string;
  input: Record<string, unknown>;
}

interface GeneratedExchange {
  text: string | null;
  calls: GeneratedCall[];
  /** Order in which the next user turn answers the calls. */
  answerOrder: number[];
  systemBetween: boolean;
  userText: string | null;
}

const conversation = fc.uniqueArray(toolName, { minLength: 1, maxLength: 5 }).chain((names) =>
  fc.record({
    names: fc.constant(names),
    exchanges: fc.array(
      fc
        .record({
          text: fc.option(fc.string({ maxLength: 20 }), { nil: null }),
          calls: fc.array(
            fc.record({
              providerId,
              name: fc.constantFrom(...names),
              // Inputs arrive as JSON: normalise what JSON cannot carry (such as -0).
              input: fc
                .dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }))
                .map((value) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>),
            }),
            { maxLength: 4 },
          ),
          systemBetween: fc.boolean(),
          userText: fc.option(fc.string({ maxLength: 20 }), { nil: null }),
        })
        .chain((exchange) =>
          fc
            .shuffledSubarray(
              exchange.calls.map((_, index) => index),
              { minLength: exchange.calls.length, maxLength: exchange.calls.length },
            )
            .map((answerOrder): GeneratedExchange => ({ ...exchange, answerOrder })),
        ),
      { minLength: 1, maxLength: 4 },
    ),
  }),
);

function buildRequest(
  names: string[],
  exchanges: GeneratedExchange[],
): { request: MessagesRequest; callerIds: string[][] } {
  let generated = 0;
  const generateId = () => `g${++generated}`;
  const messages: MessageParam[] = [{ role: 'user', content: 'start' }];
  const callerIds: string[][] = [];
  for (const exchange of exchanges) {
    const ids = encodeToolIds(
      exchange.calls.map((call) => call.providerId),
      generateId,
    );
    callerIds.push(ids);
    const assistant: ContentBlockParam[] = [];
    if (exchange.text !== null) assistant.push({ type: 'text', text: exchange.text });
    exchange.calls.forEach((call, index) =>
      assistant.push({ type: 'tool_use', id: ids[index]!, name: call.name, input: call.input }),
    );
    messages.push({ role: 'assistant', content: assistant });
    if (exchange.systemBetween) messages.push({ role: 'system', content: 'note' });
    const user: ContentBlockParam[] = exchange.answerOrder.map((index) => ({
      type: 'tool_result',
      tool_use_id: ids[index]!,
      content: `result ${index}`,
    }));
    if (exchange.userText !== null || user.length === 0)
      user.push({ type: 'text', text: exchange.userText ?? 'next' });
    messages.push({ role: 'user', content: user });
  }
  return {
    request: { model: 'claude-test', max_tokens: 64, messages, tools: names.map((name) => tool(name)) },
    callerIds,
  };
}

describe('translateRequest: properties', () => {
  it('keeps every tool id, tool name and pairing of any valid conversation', () => {
    fc.assert(
      fc.property(conversation, ({ names, exchanges }) => {
        const { request: input, callerIds } = buildRequest(names, exchanges);
        checkPairing(input.messages);
        // Only calls of different turns can stand for one upstream id (a provider that used one id
        // in two of its answers); such a request is refused. Within a turn, every call has its own.
        callerIds.forEach((ids) => expect(new Set(ids.map(decodeToolId)).size).toBe(ids.length));
        const callersByUpstream = new Map<string, Set<string>>();
        for (const id of callerIds.flat()) {
          const callers = callersByUpstream.get(decodeToolId(id)) ?? new Set<string>();
          callersByUpstream.set(decodeToolId(id), callers.add(id));
        }
        if ([...callersByUpstream.values()].some((callers) => callers.size > 1)) {
          expect(() => translated(input)).toThrow(/both stand for the upstream tool-call id/);
          return;
        }
        const { body, toolNames } = translated(input);

        // Every offered tool is there, under a name that maps back.
        expect(body.tools?.map((entry) => toolNames.fromUpstream(entry.function.name))).toEqual(names);

        const messages: ChatMessage[] = body.messages;
        const assistantIndexes = messages.flatMap((message, index) =>
          message.role === 'assistant' ? [index] : [],
        );
        expect(assistantIndexes).toHaveLength(exchanges.length);

        exchanges.forEach((exchange, exchangeIndex) => {
          const at = assistantIndexes[exchangeIndex]!;
          const assistant = messages[at]!;
          if (assistant.role !== 'assistant') throw new Error('not an assistant message');
          const ids = callerIds[exchangeIndex]!;
          if (exchange.calls.length === 0) {
            expect(assistant.tool_calls).toBeUndefined();
          } else {
            expect(assistant.tool_calls).toHaveLength(exchange.calls.length);
          }
          exchange.calls.forEach((call, index) => {
            const sent = assistant.tool_calls![index]!;
            expect(sent.id).toBe(decodeToolId(ids[index]!));
            const isFirst =
              exchange.calls.findIndex((other) => other.providerId === call.providerId) === index;
            if (call.providerId !== '' && isFirst) expect(sent.id).toBe(call.providerId);
            expect(toolNames.fromUpstream(sent.function.name)).toBe(call.name);
            expect(JSON.parse(sent.function.arguments)).toEqual(call.input);
          });
          // The tool messages follow the assistant message directly, one per call, in answer order.
          const following = messages.slice(at + 1, at + 1 + exchange.calls.length);
          expect(following).toEqual(
            exchange.answerOrder.map((index) => ({
              role: 'tool',
              tool_call_id: decodeToolId(ids[index]!),
              content: `result ${index}`,
            })),
          );
          const after = messages[at + 1 + exchange.calls.length];
          expect(after?.role).not.toBe('tool');
        });
      }),
      { numRuns: 300 },
    );
  });
});

describe('the outbound schema check', () => {
  it('rejects bodies the OpenAI schema forbids, so the checks above can fail', () => {
    const body = translate(request());
    expect(() => assertValidChatCompletionRequest({ ...body, stop: ['1', '2', '3', '4', '5'] })).toThrow();
    expect(() => assertValidChatCompletionRequest({ ...body, messages: [] })).toThrow();
    expect(() =>
      assertValidChatCompletionRequest({ ...body, messages: [{ role: 'tool', content: 'x' }] }),
    ).toThrow();
  });
});

describe('translateRequest: message shapes at the edges', () => {
  const lookup = [tool('lookup')];
  const call = { type: 'tool_use' as const, id: 'call_1', name: 'lookup', input: {} };

  it('refuses a top-level system block that is not text, naming its position', () => {
    expect(
      refusal(
        request({
          system: [
            { type: 'text', text: 'fine' },
            { type: 'image', source: { type: 'url', url: 'https://x/y.png' } } as unknown as {
              type: 'text';
              text: string;
            },
          ],
        }),
      ),
    ).toBe('system[1] is a "image" block; only text blocks can be translated');
  });

  it('refuses a message with a role it does not know, naming the message', () => {
    expect(
      refusal(
        request({
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'robot', content: 'beep' } as unknown as MessageParam,
          ],
        }),
      ),
    ).toBe('messages[1] has an unknown role "robot"');
  });

  it('sends the tool calls of an assistant turn followed only by a system message without tool messages', () => {
    expect(
      translate(
        request({
          tools: lookup,
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: [call] },
            { role: 'system', content: 'later' },
          ],
        }),
      ).messages,
    ).toStrictEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
      },
      { role: 'system', content: 'later' },
    ]);
  });

  it('leaves out a system message whose text is empty', () => {
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'a' },
            { role: 'system', content: '' },
            { role: 'user', content: 'c' },
          ],
        }),
      ).messages,
    ).toStrictEqual([
      { role: 'user', content: 'a' },
      { role: 'user', content: 'c' },
    ]);
  });

  it('sends tool results no assistant turn asked for as tool messages before the user text, in place', () => {
    const result = { type: 'tool_result' as const, tool_use_id: 'call_9', content: 'r' };
    expect(
      translate(request({ messages: [{ role: 'user', content: [result, { type: 'text', text: 'c' }] }] }))
        .messages,
    ).toStrictEqual([
      { role: 'tool', tool_call_id: 'call_9', content: 'r' },
      { role: 'user', content: 'c' },
    ]);
    // After an assistant turn without tool calls, they stay after the system message in between.
    expect(
      translate(
        request({
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: 'b' },
            { role: 'system', content: 's' },
            { role: 'user', content: [result, { type: 'text', text: 'c' }] },
          ],
        }),
      ).messages,
    ).toStrictEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'system', content: 's' },
      { role: 'tool', tool_call_id: 'call_9', content: 'r' },
      { role: 'user', content: 'c' },
    ]);
  });

  it.each([
    ['blank text and a tool call', [{ type: 'text', text: ' ' }, call]],
    ['only a tool call', [call]],
    ['a text block whose text is not a string', [{ type: 'text', text: 5 }]],
  ])('refuses a final assistant message of %s as a prefill', (_label, content) => {
    expect(
      refusal(
        request({
          tools: lookup,
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: content },
          ],
        }),
      ),
    ).toBe(
      'messages[1]: the request ends with an assistant message (a prefill), and prefill is not supported by ' +
        'OpenAI-compatible servers; end the request with a user message',
    );
  });

  it.each([['a non-text block that carries a text field', { type: 'image', text: 'caption' }, 'image']])(
    'refuses in a system message %s',
    (_label, block, type) => {
      expect(
        refusal(
          request({
            messages: [
              { role: 'system', content: [block as unknown as ContentBlockParam] },
              { role: 'user', content: 'hi' },
            ],
          }),
        ),
      ).toBe(`messages[0].content[0] is a "${type}" block in a system message; only text can be translated`);
    },
  );
});

describe('translateRequest: system prompt cache_control on a dialect that forwards it', () => {
  const openrouter = { dialect: DIALECTS.openrouter };

  it('sends text parts with cache_control when every system block has one', () => {
    expect(
      translate(
        request({
          system: [
            { type: 'text', text: 'A', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'B', cache_control: { type: 'ephemeral', ttl: '1h' } },
          ],
        }),
        openrouter,
      ).messages[0],
    ).toStrictEqual({
      role: 'system',
      content: [
        { type: 'text', text: 'A', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'B', cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
    });
  });

  it('sends text parts, only the marked ones with cache_control, when some system blocks have one', () => {
    expect(
      translate(
        request({
          system: [
            { type: 'text', text: 'A' },
            { type: 'text', text: 'B', cache_control: { type: 'ephemeral' } },
          ],
        }),
        openrouter,
      ).messages[0],
    ).toStrictEqual({
      role: 'system',
      content: [
        { type: 'text', text: 'A' },
        { type: 'text', text: 'B', cache_control: { type: 'ephemeral' } },
      ],
    });
  });

  it('sends one joined string when no system block has cache_control', () => {
    expect(
      translate(
        request({
          system: [
            { type: 'text', text: 'A' },
            { type: 'text', text: 'B' },
          ],
        }),
        openrouter,
      ).messages[0],
    ).toStrictEqual({ role: 'system', content: 'A\n\nB' });
  });
});
