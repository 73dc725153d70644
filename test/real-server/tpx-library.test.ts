/**
 * The `tpx` provider through the library, against a real llama.cpp server (dialect `llamacpp`,
 * `/v1/chat/completions`). The model's text is random: these tests pin shapes, ids, pairing, usage
 * and stop reasons, never the words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ContentBlock, ToolUseBlock } from '../../src/protocol/messages.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { startLlamaServer, type LlamaServer } from './llama-server.js';
import { startRecordingTap, type RecordingTap } from './recording-tap.js';

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
    required: ['city', 'unit'],
  },
};

let server: LlamaServer;
let tap: RecordingTap;
let transport: ModelTransport;

beforeAll(async () => {
  server = await startLlamaServer({ model: 'tiny-tools' });
  tap = await startRecordingTap(server.url);
  transport = createTransport({
    env: {},
    tpxToken: 'real-server-token',
    tpxBaseUrl: `${tap.url}/v1`,
    tpxDialect: 'llamacpp',
    maxRetries: 0,
  });
});

afterAll(async () => {
  await transport?.close();
  await tap?.close();
  await server?.stop();
});

describe('tpx provider against llama.cpp', () => {
  it('answers a forced tool call with tool_use blocks whose input follows the schema', async () => {
    const message = await transport.send({
      model: 'tiny',
      max_tokens: 200,
      tools: [weatherTool],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    const toolUses = message.content.filter(
      (block): block is ToolUseBlock => (block as ContentBlock).type === 'tool_use',
    );
    expect(toolUses.length).toBeGreaterThan(0);
    const first = toolUses[0]!;
    expect(first.name).toBe('get_weather');
    expect(first.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Object.keys(first.input as object).sort()).toEqual(['city', 'unit']);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    // What went over the wire is Chat Completions with the tool forced.
    const sent = tap.exchanges.at(-1)!.request;
    expect(sent.url).toBe('/v1/chat/completions');
    expect((sent.json as { tool_choice: unknown }).tool_choice).toBe('required');
  });
});
