/**
 * The Responses request translation field by field: each scalar field's mapping and each refusal with
 * its exact message, block by block.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { ContentBlockParam, MessageParam, MessagesRequest } from '../protocol/messages.js';
import { encodeReasoningSignature } from './reasoning-signature-codec.js';
import { translateResponsesRequest } from './translate-responses-request.js';

function request(fields: Partial<MessagesRequest> = {}): MessagesRequest {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'Hello' }],
    ...fields,
  };
}

const body = (fields: Partial<MessagesRequest>) => translateResponsesRequest(request(fields)).body;
const loose = <T>(value: unknown): T => value as T;
/** A content block of a shape the types do not allow, as a caller may send it. */
const rawBlock = (value: unknown): ContentBlockParam => value as ContentBlockParam;

function refusal(fields: Partial<MessagesRequest>): string {
  try {
    translateResponsesRequest(request(fields));
  } catch (error) {
    if (isTransportError(error) && error.code === 'MODEL_EINVAL' && error.status === 400)
      return error.message;
    throw error;
  }
  throw new Error('expected MODEL_EINVAL');
}

const weatherTool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } } },
};

/** A conversation whose last user turn holds `blocks`. */
const userTurn = (blocks: unknown[]): Partial<MessagesRequest> => ({
  messages: [{ role: 'user', content: loose<MessageParam['content']>(blocks) }],
});

/** A call and a user turn answering it with `blocks` as the tool result's content. */
function toolResultWith(content: unknown, isError = false): Partial<MessagesRequest> {
  return {
    tools: [weatherTool],
    messages: [
      { role: 'user', content: 'Go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'get_weather', input: {} }] },
      {
        role: 'user',
        content: [
          rawBlock({
            type: 'tool_result',
            tool_use_id: 'c1',
            content,
            ...(isError ? { is_error: true } : {}),
          }),
        ],
      },
    ],
  };
}

describe('translateResponsesRequest: scalar fields', () => {
  it('asks for a stream only when the request streams', () => {
    expect(body({ stream: true }).stream).toBe(true);
    expect(body({ stream: false })).not.toHaveProperty('stream');
  });

  it('passes temperature and top_p, zero included, and drops top_k', () => {
    const translated = body({ temperature: 0, top_p: 0, top_k: 5 });
    expect([translated.temperature, translated.top_p]).toStrictEqual([0, 0]);
    expect(translated).not.toHaveProperty('top_k');
    expect(body({})).not.toHaveProperty('temperature');
    expect(body({})).not.toHaveProperty('top_p');
  });

  it("uses the model given in the options over the request's", () => {
    expect(translateResponsesRequest(request(), { model: 'gpt-5.1' }).body.model).toBe('gpt-5.1');
    expect(translateResponsesRequest(request()).body.model).toBe('claude-sonnet-4-5');
  });

  it('refuses a max_tokens that is not a positive integer', () => {
    const message = (value: string) => `max_tokens must be a positive integer, got ${value}`;
    expect(refusal({ max_tokens: -1 })).toBe(message('-1'));
    expect(refusal({ max_tokens: 2.5 })).toBe(message('2.5'));
    expect(refusal({ max_tokens: 0 })).toBe(
      'max_tokens: 0 asks only to warm the prompt cache, which OpenAI-compatible servers cannot do; send ' +
        'max_tokens of 1 or more',
    );
    expect(body({ max_tokens: 16 }).max_output_tokens).toBe(16);
    expect(body({ max_tokens: 15 }).max_output_tokens).toBe(16);
  });

  it('sends metadata.user_id as user, hashing one longer than 64 characters, and drops an empty one', () => {
    expect(body({ metadata: { user_id: 'user-42' } }).user).toBe('user-42');
    const exactly64 = 'u'.repeat(64);
    expect(body({ metadata: { user_id: exactly64 } }).user).toBe(exactly64);
    const long = 'u'.repeat(65);
    expect(body({ metadata: { user_id: long } }).user).toBe(
      createHash('sha256').update(long, 'utf8').digest('hex'),
    );
    expect(body({ metadata: { user_id: '' } })).not.toHaveProperty('user');
    expect(body({ metadata: { user_id: null } })).not.toHaveProperty('user');
    expect(body({ metadata: {} })).not.toHaveProperty('user');
  });

  it('refuses stop sequences, but takes an empty list', () => {
    expect(refusal({ stop_sequences: ['END'] })).toBe(
      'stop_sequences cannot be sent on the Responses wire: the OpenAI Responses API has no stop parameter; ' +
        'remove them, or use the Chat Completions wire (TPX_WIRE=chat)',
    );
    expect(body({ stop_sequences: [] })).not.toHaveProperty('stop');
  });

  it('leaves out instructions for an empty system prompt', () => {
    expect(body({ system: '' })).not.toHaveProperty('instructions');
    expect(body({ system: 'Be brief.' }).instructions).toBe('Be brief.');
  });

  it('refuses a system prompt block that is not text', () => {
    expect(
      refusal({
        system: loose([
          { type: 'text', text: 'a' },
          { type: 'image', source: {} },
        ]),
      }),
    ).toBe('system[1] is a "image" block; only text blocks can be translated');
  });
});

describe('translateResponsesRequest: reasoning', () => {
  it('asks for the effort of the thinking budget with a summary (the rules: read-effort.test.ts)', () => {
    expect(body({ thinking: { type: 'enabled', budget_tokens: 4096 } }).reasoning).toStrictEqual({
      effort: 'medium',
      summary: 'auto',
    });
  });

  it('asks for output_config.effort over the thinking budget, its top levels as high', () => {
    const reasoning = (effort: string) =>
      body({ output_config: { effort }, thinking: { type: 'enabled', budget_tokens: 1024 } }).reasoning;
    expect(reasoning('max')).toStrictEqual({ effort: 'high', summary: 'auto' });
    expect(reasoning('medium')).toStrictEqual({ effort: 'medium', summary: 'auto' });
  });

  it('asks for no reasoning without thinking or effort, and ignores a null effort', () => {
    expect(body({ output_config: loose({ effort: null }) })).not.toHaveProperty('reasoning');
    expect(body({ output_config: {} })).not.toHaveProperty('reasoning');
  });

  it('refuses an unknown effort and a thinking budget that is not a number', () => {
    expect(refusal({ output_config: loose({ effort: 'extreme' }) })).toBe(
      'output_config.effort "extreme" is not one of "low", "medium", "high", "xhigh", "max"',
    );
    const message = 'thinking.budget_tokens must be a number when thinking.type is "enabled"';
    expect(refusal({ thinking: loose({ type: 'enabled', budget_tokens: '8000' }) })).toBe(message);
    expect(refusal({ thinking: loose({ type: 'enabled', budget_tokens: Number.POSITIVE_INFINITY }) })).toBe(
      message,
    );
  });
});

describe('translateResponsesRequest: structured output', () => {
  it('refuses a format that is not a JSON schema, naming its type', () => {
    const message = (type: string) =>
      `output_config.format of type ${type} cannot be translated; only {"type": "json_schema", "schema": {…}} ` +
      'has a Responses API equivalent (text.format)';
    expect(refusal({ output_config: loose({ format: { type: 'xml' } }) })).toBe(message('"xml"'));
    expect(refusal({ output_config: loose({ format: 'json' }) })).toBe(message('string'));
    expect(refusal({ output_config: loose({ format: { type: 'json_schema', schema: 'object' } }) })).toBe(
      'output_config.format.schema must be a JSON Schema object',
    );
    expect(body({ output_config: loose({ format: null }) })).not.toHaveProperty('text');
  });
});

describe('translateResponsesRequest: tools and tool_choice', () => {
  it('gives a tool without an input schema an empty object schema, and one without a description none', () => {
    const { tools } = body({ tools: [loose({ name: 'ping' })] });
    expect(tools).toStrictEqual([
      { type: 'function', name: 'ping', parameters: { type: 'object', properties: {} }, strict: false },
    ]);
  });

  it('sends a tool with its description, schema and strictness', () => {
    expect(body({ tools: [{ ...weatherTool, strict: true }] }).tools).toStrictEqual([
      {
        type: 'function',
        name: 'get_weather',
        parameters: weatherTool.input_schema,
        strict: true,
        description: 'Weather for a city',
      },
    ]);
  });

  it('takes custom-typed tools as ordinary function tools', () => {
    expect(body({ tools: [loose({ ...weatherTool, type: 'custom' })] }).tools?.[0]?.name).toBe('get_weather');
    expect(body({ tools: [loose({ ...weatherTool, type: null })] }).tools?.[0]?.name).toBe('get_weather');
  });

  it('refuses a server tool with its position, name and type', () => {
    expect(
      refusal({ tools: [weatherTool, loose({ type: 'web_search_20250305', name: 'web_search' })] }),
    ).toBe(
      'tools[1] ("web_search") has type "web_search_20250305": server tools and Anthropic-defined tools run on ' +
        "Anthropic's side and have no Responses API equivalent here; remove it, or use the anthropic provider",
    );
  });

  it('sends no tool_choice auto or none when there are no tools', () => {
    expect(body({ tool_choice: { type: 'auto' } })).not.toHaveProperty('tool_choice');
    expect(body({ tool_choice: { type: 'none' } })).not.toHaveProperty('tool_choice');
    expect(body({ tool_choice: { type: 'auto', disable_parallel_tool_use: true } })).not.toHaveProperty(
      'parallel_tool_calls',
    );
  });

  it('refuses tool_choice any without tools, and a choice of an unknown type', () => {
    expect(refusal({ tool_choice: { type: 'any' } })).toBe(
      'tool_choice {"type": "any"} requires at least one tool in tools',
    );
    expect(refusal({ tools: [weatherTool], tool_choice: loose({ type: 'some' }) })).toBe(
      'tool_choice has an unknown type "some"',
    );
  });

  it('forbids parallel calls only when asked, and never for tool_choice none', () => {
    const parallel = (choice: NonNullable<MessagesRequest['tool_choice']>) =>
      body({ tools: [weatherTool], tool_choice: choice }).parallel_tool_calls;
    expect(parallel({ type: 'auto', disable_parallel_tool_use: true })).toBe(false);
    expect(parallel({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true })).toBe(false);
    expect(parallel({ type: 'none', disable_parallel_tool_use: true } as never)).toBeUndefined();
    expect(parallel({ type: 'auto', disable_parallel_tool_use: false })).toBeUndefined();
    expect(parallel({ type: 'auto' })).toBeUndefined();
  });
});

describe('translateResponsesRequest: turns', () => {
  it('refuses a request without messages', () => {
    expect(refusal({ messages: [] })).toBe('messages must contain at least one message');
  });

  it('refuses a request whose only message is a blank assistant message', () => {
    expect(refusal({ messages: [{ role: 'assistant', content: [{ type: 'text', text: ' ' }] }] })).toBe(
      'messages holds nothing to send: its only message is a blank assistant message',
    );
  });

  it('drops a blank final assistant message (a prefill is refused: prepare-request.test.ts)', () => {
    expect(
      body({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'text', text: '' }] },
        ],
      }).input,
    ).toStrictEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }]);
  });

  it('refuses an unknown role', () => {
    expect(refusal({ messages: [loose({ role: 'tool', content: 'x' })] })).toBe(
      'messages[0] has an unknown role "tool"',
    );
  });

  it('leaves out an empty system message, and refuses a system message block that is not text', () => {
    expect(
      body({
        messages: [
          { role: 'system', content: '' },
          { role: 'user', content: 'Hi' },
        ],
      }).input,
    ).toStrictEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }]);
    expect(
      refusal({
        messages: [
          loose({ role: 'system', content: [{ type: 'image', source: {} }] }),
          { role: 'user', content: 'Hi' },
        ],
      }),
    ).toBe('messages[0].content[0] is a "image" block in a system message; only text can be translated');
    expect(
      refusal({
        messages: [
          loose({ role: 'system', content: [{ type: 'text', text: null }] }),
          { role: 'user', content: 'Hi' },
        ],
      }),
    ).toBe('messages[0].content[0].text must be a string (a text block in a system message)');
  });

  it('sends a user turn of tool results only as the outputs, without an empty message', () => {
    const input = body({
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'get_weather', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'sunny' }] },
      ],
    }).input;
    expect(input.map((item) => item.type)).toStrictEqual([
      'message',
      'function_call',
      'function_call_output',
    ]);
  });

  it('sends an empty user message as one empty text part', () => {
    expect(body({ messages: [{ role: 'user', content: [] }] }).input).toStrictEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: '' }] },
    ]);
  });

  it('sends a tool result that answers no call in the previous turn where it stands', () => {
    const input = body({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'orphan', content: 'late' },
            { type: 'text', text: 'Hi' },
          ],
        },
      ],
    }).input;
    expect(input).toStrictEqual([
      { type: 'function_call_output', call_id: 'orphan', output: 'late' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
    ]);
  });

  it('answers a call only from the next user turn, not from a later assistant turn', () => {
    const input = body({
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'get_weather', input: {} }] },
        { role: 'assistant', content: [{ type: 'text', text: 'still here' }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: 'sunny' },
            { type: 'text', text: 'ok' },
          ],
        },
      ],
    }).input;
    expect(input.map((item) => item.type)).toStrictEqual([
      'message',
      'function_call',
      'message',
      'function_call_output',
      'message',
    ]);
  });
});

describe('translateResponsesRequest: assistant blocks', () => {
  it('keeps the order of texts, reasoning and calls, one message per run of text', () => {
    const signature = encodeReasoningSignature({ id: 'rs_1', source: 'summary', encryptedContent: 'enc' });
    const input = body({
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Go' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
            { type: 'thinking', thinking: 'why', signature },
            { type: 'redacted_thinking', data: 'x' },
            { type: 'thinking', thinking: 'unsigned', signature: 'anthropic-signature' },
            { type: 'text', text: 'c' },
            { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'sunny' }] },
      ],
    }).input;
    expect(input).toStrictEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Go' }] },
      {
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'a', annotations: [] },
          { type: 'output_text', text: 'b', annotations: [] },
        ],
      },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'why' }],
        content: [],
        encrypted_content: 'enc',
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'c', annotations: [] }] },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
    ]);
  });

  it('restores a signed reasoning item without id, text or encrypted content as an empty item', () => {
    const signature = encodeReasoningSignature({
      id: undefined,
      encryptedContent: undefined,
      source: 'content',
    });
    const input = body({
      messages: [
        { role: 'user', content: 'Go' },
        {
          role: 'assistant',
          content: [rawBlock({ type: 'thinking', signature }), { type: 'text', text: 'done' }],
        },
        { role: 'user', content: 'more' },
      ],
    }).input;
    expect(input[1]).toStrictEqual({ type: 'reasoning', summary: [], content: [] });
  });

  it('sends a call without input as empty arguments', () => {
    const input = body({
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Go' },
        { role: 'assistant', content: [rawBlock({ type: 'tool_use', id: 'c1', name: 'get_weather' })] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1' }] },
      ],
    }).input;
    expect(input.slice(1)).toStrictEqual([
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: '' },
    ]);
  });

  it.each([
    [
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
      'messages[1].content[0]: the Responses API does not accept image blocks in assistant messages',
    ],
    [
      { type: 'document', source: { type: 'text', data: 'x' } },
      'messages[1].content[0]: the Responses API does not accept document blocks in assistant messages',
    ],
    [
      { type: 'tool_result', tool_use_id: 'c1', content: 'x' },
      'messages[1].content[0]: tool_result blocks belong in user messages, not assistant messages',
    ],
    [
      { type: 'server_tool_use', id: 's1', name: 'web_search', input: {} },
      'messages[1].content[0]: a "server_tool_use" block cannot be translated to the Responses API; remove it, ' +
        'or use the anthropic provider',
    ],
  ])('refuses an assistant block %j', (block, message) => {
    expect(
      refusal({
        messages: [
          { role: 'user', content: 'Go' },
          { role: 'assistant', content: [rawBlock(block)] },
          { role: 'user', content: 'more' },
        ],
      }),
    ).toBe(message);
  });
});

describe('translateResponsesRequest: user blocks', () => {
  it.each([
    [{ type: 'tool_use', id: 'c1', name: 'get_weather', input: {} }, 'tool_use'],
    [{ type: 'thinking', thinking: 'x', signature: 's' }, 'thinking'],
    [{ type: 'redacted_thinking', data: 'x' }, 'redacted_thinking'],
  ])('refuses a %j block in a user message', (block, type) => {
    expect(refusal(userTurn([{ type: 'text', text: 'a' }, block]))).toBe(
      `messages[0].content[1]: ${type} blocks belong in assistant messages, not user messages`,
    );
  });

  it('refuses a block type it does not know', () => {
    expect(refusal(userTurn([{ type: 'container_upload', file_id: 'f' }]))).toBe(
      'messages[0].content[0]: a "container_upload" block cannot be translated to the Responses API; remove it, ' +
        'or use the anthropic provider',
    );
  });

  it('refuses an image whose source it cannot translate, naming the type', () => {
    const message = (type: string) =>
      `messages[0].content[0]: an image with source type ${type} cannot be translated; use a base64 or url source`;
    expect(refusal(userTurn([{ type: 'image', source: { type: 'file', file_id: 'f' } }]))).toBe(
      message('"file"'),
    );
    expect(refusal(userTurn([{ type: 'image', source: { type: 'base64', data: 'x' } }]))).toBe(
      message('"base64"'),
    );
    expect(refusal(userTurn([{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }]))).toBe(
      message('"base64"'),
    );
    expect(refusal(userTurn([{ type: 'image', source: { type: 'url' } }]))).toBe(message('"url"'));
    expect(refusal(userTurn([{ type: 'image', source: 'https://example.com/a.png' }]))).toBe(
      message('string'),
    );
  });

  it('names a titled PDF after its title, and takes a base64 document without a media type as a PDF', () => {
    expect(
      body(userTurn([{ type: 'document', title: 'r.pdf', source: { type: 'base64', data: 'JVBER' } }])).input,
    ).toStrictEqual([
      {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_file', filename: 'r.pdf', file_data: 'data:application/pdf;base64,JVBER' }],
      },
    ]);
  });

  it('sends a text document without a title as its text', () => {
    expect(
      body(userTurn([{ type: 'document', title: '', source: { type: 'text', data: 'notes' } }])).input,
    ).toStrictEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'notes' }] }]);
  });

  it('refuses a document whose source it cannot translate, naming the type', () => {
    const message = (type: string) =>
      `messages[0].content[0]: a document with source type ${type} cannot be translated; use a text, base64 or url source`;
    expect(refusal(userTurn([{ type: 'document', source: { type: 'file', file_id: 'f' } }]))).toBe(
      message('"file"'),
    );
    expect(refusal(userTurn([{ type: 'document', source: { type: 'text', data: 3 } }]))).toBe(
      message('"text"'),
    );
    expect(refusal(userTurn([{ type: 'document', source: { type: 'base64' } }]))).toBe(message('"base64"'));
    expect(refusal(userTurn([{ type: 'document', source: { type: 'url', url: null } }]))).toBe(
      message('"url"'),
    );
    expect(refusal(userTurn([{ type: 'document' }]))).toBe(message('undefined'));
  });
});

describe('translateResponsesRequest: tool results', () => {
  it('marks an error result with a string content, or with none', () => {
    expect(body(toolResultWith('boom', true)).input.at(-1)).toStrictEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: '[tool error] boom',
    });
    expect(body(toolResultWith(null, true)).input.at(-1)).toStrictEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: '[tool error] ',
    });
  });

  it('joins text-only content into one string, with the error mark', () => {
    const content = [
      { type: 'text', text: 'one' },
      { type: 'document', source: { type: 'text', data: 'two' } },
      {
        type: 'search_result',
        source: 'https://example.com',
        title: 'T',
        content: [{ type: 'text', text: 'three' }],
      },
    ];
    expect(body(toolResultWith(content)).input.at(-1)).toStrictEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: 'one\ntwo\nSearch result: T\nSource: https://example.com\n\nthree',
    });
    expect(body(toolResultWith([{ type: 'text', text: 'bad' }], true)).input.at(-1)).toStrictEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: '[tool error] bad',
    });
  });

  it('sends content with files as input parts, unmarked when it is no error', () => {
    const content = [
      { type: 'text', text: 'see' },
      { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
    ];
    expect(body(toolResultWith(content)).input.at(-1)).toStrictEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: [
        { type: 'input_text', text: 'see' },
        { type: 'input_file', file_url: 'https://example.com/a.pdf' },
      ],
    });
  });

  it('refuses content that is not a string or a list, a part that is not a block, and blocks it cannot send', () => {
    expect(refusal(toolResultWith({ type: 'text', text: 'x' }))).toBe(
      'messages[2].content[0].content must be a string or an array of blocks',
    );
    expect(refusal(toolResultWith(['x']))).toBe('messages[2].content[0].content[0] must be a content block');
    expect(
      refusal(
        toolResultWith([
          { type: 'text', text: 'a' },
          { type: 'future_block', detail: 't' },
        ]),
      ),
    ).toBe(
      'messages[2].content[0].content[1]: a "future_block" block inside a tool_result cannot be translated to ' +
        'the Responses API; remove it, or use the anthropic provider',
    );
    expect(refusal(toolResultWith([{ type: 'tool_reference', tool_name: 'a b' }]))).toBe(
      'messages[2].content[0].content[0].tool_name must be a tool name of 1 to 256 characters from ' +
        '[a-zA-Z0-9_-], got "a b"',
    );
    expect(refusal(toolResultWith([{ type: 'image', source: { type: 'file' } }]))).toBe(
      'messages[2].content[0].content[0]: an image with source type "file" cannot be translated; use a base64 or ' +
        'url source',
    );
  });
});
