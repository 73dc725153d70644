/**
 * `tpx serve` on the `tpx` path, with the official SDK as the client, for the parts of the Messages
 * protocol added since the first translation tables: honest usage on streams, the legacy
 * `output_format`, documents and search results, Anthropic-defined client tools, context editing done
 * locally, and prompt caching.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startTpxProxy, type TpxProxy } from './serve-support.js';

let proxy: TpxProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

function clientFor(server: { url: string }): Anthropic {
  return new Anthropic({ baseURL: server.url, apiKey: 'sk-client-key', maxRetries: 0 });
}

/** The body of the n-th request the mock model received. */
function upstreamBody(index = 0): Record<string, unknown> {
  return proxy!.mock.requests[index]!.body as Record<string, unknown>;
}

describe('honest usage on a translated stream', () => {
  it('puts an estimate in message_start and the upstream figure in message_delta', async () => {
    proxy = await startTpxProxy({ mock: { script: { replies: [{ text: 'Counted.' }] } } });
    const stream = await clientFor(proxy.server).messages.create({
      model: 'claude-test',
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: 'Please count the tokens of this sentence for me.' }],
    });
    const usages: { event: string; input_tokens: number | null | undefined }[] = [];
    for await (const event of stream) {
      if (event.type === 'message_start') {
        usages.push({ event: event.type, input_tokens: event.message.usage.input_tokens });
      }
      if (event.type === 'message_delta') {
        usages.push({ event: event.type, input_tokens: event.usage.input_tokens });
      }
    }
    const [start, delta] = usages;
    // The estimate is conservative: at least the ~10 tokens of the sentence plus message framing.
    expect(start!.input_tokens).toBeGreaterThanOrEqual(15);
    // message_delta carries what the upstream counted (the mock counts a token per four characters of
    // the prompt it received), not the estimate.
    expect(delta!.input_tokens).toBeGreaterThan(0);
    expect(delta!.input_tokens).not.toBe(start!.input_tokens);
  });
});

describe('the legacy output_format', () => {
  it('reaches the upstream as response_format', async () => {
    proxy = await startTpxProxy();
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    const message = await clientFor(proxy.server).messages.create({
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Name a city.' }],
      // The older top-level field; the SDK's types know only output_config.format.
      ...({ output_format: { type: 'json_schema', schema } } as object),
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(upstreamBody()['response_format']).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema, strict: true },
    });
    expect(message.content[0]?.type).toBe('text');
  });
});

describe('Anthropic-defined client tools', () => {
  const BASH_TOOL = { type: 'bash_20250124', name: 'bash' } as const;

  it('offers bash upstream with its schema, and its call comes back as a bash tool_use', async () => {
    proxy = await startTpxProxy({
      mock: { script: { replies: [{ tool_calls: [{ name: 'bash', arguments: { command: 'ls -la' } }] }] } },
    });
    const message = await clientFor(proxy.server).messages.create({
      model: 'claude-test',
      max_tokens: 64,
      tools: [BASH_TOOL],
      messages: [{ role: 'user', content: 'List the files' }],
    });
    const tools = upstreamBody()['tools'] as { function: { name: string; parameters: unknown } }[];
    expect(tools.map((tool) => tool.function.name)).toEqual(['bash']);
    expect(tools[0]!.function.parameters).toMatchObject({ properties: { command: { type: 'string' } } });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'tool_use', id: expect.any(String) as unknown, name: 'bash', input: { command: 'ls -la' } },
    ]);
  });

  it('streams a text editor call under its Anthropic name', async () => {
    proxy = await startTpxProxy({
      mock: {
        script: {
          replies: [
            {
              tool_calls: [
                { name: 'str_replace_based_edit_tool', arguments: { command: 'view', path: '/tmp/a.txt' } },
              ],
            },
          ],
        },
      },
    });
    const message = await clientFor(proxy.server)
      .messages.stream({
        model: 'claude-test',
        max_tokens: 64,
        tools: [{ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }],
        messages: [{ role: 'user', content: 'Show /tmp/a.txt' }],
      })
      .finalMessage();
    expect(message.content).toEqual([
      {
        type: 'tool_use',
        id: expect.any(String) as unknown,
        name: 'str_replace_based_edit_tool',
        input: { command: 'view', path: '/tmp/a.txt' },
      },
    ]);
  });

  it("refuses Claude Code's web search request with a 400 naming the tool and the dialect, sending nothing", async () => {
    proxy = await startTpxProxy();
    // The shape of the request Claude Code's WebSearch tool makes: one user turn, only the web search tool.
    const error = await clientFor(proxy.server)
      .messages.create({
        model: 'claude-test',
        max_tokens: 1024,
        stream: true,
        system: 'You are an assistant for performing a web search tool use',
        messages: [{ role: 'user', content: 'Perform a web search for the query: tpx transport' }],
        tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 8 }],
      })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const apiError = error as InstanceType<typeof Anthropic.BadRequestError>;
    expect(apiError.status).toBe(400);
    expect(apiError.error).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'tools[0] ("web_search") has type "web_search_20250305": a server tool that runs on Anthropic\'s ' +
          'side, which a generic OpenAI-compatible server (dialect "openai-generic") cannot run; remove it, or ' +
          'use the anthropic provider',
      },
      request_id: expect.any(String) as unknown,
    });
    expect(proxy.mock.requests).toHaveLength(0);
  });
});

describe('documents and search results', () => {
  const PDF = { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' } as const;

  it('sends a PDF as a file part and a search result as text', async () => {
    proxy = await startTpxProxy({ mock: { script: { replies: [{ text: 'Read.' }] } } });
    const message = await clientFor(proxy.server).messages.create({
      model: 'claude-test',
      max_tokens: 64,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', title: 'report.pdf', source: PDF },
            {
              type: 'search_result',
              source: 'https://example.com/r',
              title: 'Result',
              content: [{ type: 'text', text: 'Found it.' }],
            },
            { type: 'text', text: 'Compare them.' },
          ],
        },
      ],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Read.' }]);
    const messages = upstreamBody()['messages'] as { content: unknown }[];
    expect(messages[0]!.content).toEqual([
      {
        type: 'file',
        file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' },
      },
      { type: 'text', text: 'Search result: Result\nSource: https://example.com/r\n\nFound it.' },
      { type: 'text', text: 'Compare them.' },
    ]);
  });

  it('refuses a PDF on a dialect without file parts with a 400 naming the block and the dialect', async () => {
    proxy = await startTpxProxy({ transport: { tpxDialect: 'vllm' } });
    const error = await clientFor(proxy.server)
      .messages.stream({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'document', source: PDF }] }],
      })
      .finalMessage()
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error as {
      error: { message: string };
    };
    expect(body.error.message).toContain(
      'messages[0].content[0]: a document block holding a base64 PDF cannot be sent to vLLM (dialect "vllm")',
    );
    expect(proxy.mock.requests).toHaveLength(0);
  });
});

describe('context editing done locally', () => {
  /** Four tool rounds with big results, then a question. */
  function conversation(): Anthropic.MessageParam[] {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Read the logs' }];
    for (let index = 0; index < 4; index++) {
      messages.push(
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: `toolu_${index}`, name: 'read_log', input: { part: index } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: `toolu_${index}`, content: `log line ${index} `.repeat(200) },
          ],
        },
      );
    }
    messages.push({ role: 'assistant', content: 'Read them all.' }, { role: 'user', content: 'Summarise' });
    return messages;
  }
  const TOOLS = [{ name: 'read_log', input_schema: { type: 'object' as const, properties: {} } }];
  const CONTEXT_MANAGEMENT = {
    edits: [
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'input_tokens', value: 1_000 },
        keep: { type: 'tool_uses', value: 1 },
      },
    ],
  };

  function toolMessages(index = 0): string[] {
    const messages = upstreamBody(index)['messages'] as { role: string; content: string }[];
    return messages.filter((message) => message.role === 'tool').map((message) => message.content);
  }

  it('clears old tool results before sending and reports the edit on the message', async () => {
    proxy = await startTpxProxy({ mock: { script: { replies: [{ text: 'Summary.' }] } } });
    const message = await clientFor(proxy.server).beta.messages.create({
      model: 'claude-test',
      max_tokens: 64,
      tools: TOOLS,
      messages: conversation(),
      context_management: CONTEXT_MANAGEMENT,
      betas: ['context-management-2025-06-27'],
    } as Anthropic.Beta.MessageCreateParamsNonStreaming);
    const sent = toolMessages();
    expect(sent.slice(0, 3)).toEqual([
      '[This tool result was cleared to save context.]',
      '[This tool result was cleared to save context.]',
      '[This tool result was cleared to save context.]',
    ]);
    expect(sent[3]).toContain('log line 3');
    const applied = (message as unknown as { context_management: { applied_edits: unknown[] } })
      .context_management.applied_edits;
    expect(applied).toEqual([
      {
        type: 'clear_tool_uses_20250919',
        cleared_tool_uses: 3,
        cleared_input_tokens: expect.any(Number) as unknown,
      },
    ]);
    expect((applied[0] as { cleared_input_tokens: number }).cleared_input_tokens).toBeGreaterThan(1_000);
  });

  it('reports the edit on message_delta of a stream', async () => {
    proxy = await startTpxProxy({ mock: { script: { replies: [{ text: 'Summary.' }] } } });
    const stream = await clientFor(proxy.server).beta.messages.create({
      model: 'claude-test',
      max_tokens: 64,
      stream: true,
      tools: TOOLS,
      messages: conversation(),
      context_management: CONTEXT_MANAGEMENT,
      betas: ['context-management-2025-06-27'],
    } as Anthropic.Beta.MessageCreateParamsStreaming);
    let reported: unknown;
    for await (const event of stream) {
      if (event.type === 'message_delta')
        reported = (event as { context_management?: unknown }).context_management;
    }
    expect(reported).toEqual({
      applied_edits: [
        {
          type: 'clear_tool_uses_20250919',
          cleared_tool_uses: 3,
          cleared_input_tokens: expect.any(Number) as unknown,
        },
      ],
    });
    expect(toolMessages()[0]).toBe('[This tool result was cleared to save context.]');
  });

  it('refuses a compaction edit with a 400 naming it, sending nothing', async () => {
    proxy = await startTpxProxy();
    const error = await clientFor(proxy.server)
      .beta.messages.create({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hi' }],
        context_management: { edits: [{ type: 'compact_20260112' }] },
      } as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming)
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error as {
      error: { message: string };
    };
    expect(body.error.message).toContain('context_management.edits[0] has type "compact_20260112"');
    expect(proxy.mock.requests).toHaveLength(0);
  });
});

describe('prompt caching', () => {
  it('forwards cache_control to an OpenRouter upstream and reports its cache writes and reads', async () => {
    proxy = await startTpxProxy({
      mock: { script: { replies: [{ text: 'Cached.' }] } },
      transport: { tpxDialect: 'openrouter' },
    });
    const message = await clientFor(proxy.server).messages.create({
      model: 'claude-test',
      max_tokens: 64,
      system: [{ type: 'text', text: 'A long, stable preamble.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Cached.' }]);
    const messages = upstreamBody()['messages'] as { role: string; content: unknown }[];
    expect(messages[0]).toEqual({
      role: 'system',
      content: [{ type: 'text', text: 'A long, stable preamble.', cache_control: { type: 'ephemeral' } }],
    });
    expect(message.usage.cache_creation_input_tokens).toBe(0);
    expect(message.usage.cache_read_input_tokens).toBe(0);
  });
});
