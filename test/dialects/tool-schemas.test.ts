/**
 * Tool input schemas as each upstream accepts them, end to end: the real transport (`createTransport`,
 * the `tpx` provider with a dialect) posts over loopback to a scripted server, on both wires, and the
 * test reads the tool schema the server received. Gemini and Vertex get Google's OpenAPI subset; every
 * other dialect gets the caller's JSON Schema unchanged (docs/dialects.md, "Tool schemas").
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../src/protocol/messages.js';
import type { DialectName } from '../../src/translate/dialects.js';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';
import { tpxTransportTo } from '../helpers/tpx-transport.js';

/** What zod-to-json-schema and MCP servers write: a draft-07 schema with references and nullable types. */
const READ_FILE_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    file_path: { type: 'string', description: 'The absolute path' },
    offset: { type: 'number', exclusiveMinimum: 0 },
    mode: { type: 'string', enum: ['read', 'write'], default: 'read' },
    encoding: { anyOf: [{ $ref: '#/definitions/Encoding' }, { type: 'null' }] },
    tags: { type: ['array', 'null'], items: { type: 'string', format: 'uri' } },
  },
  required: ['file_path', 'missing'],
  additionalProperties: false,
  definitions: { Encoding: { type: 'string', const: 'utf8' } },
};

/** The same schema in Google's subset. */
const READ_FILE_GEMINI = {
  type: 'object',
  properties: {
    file_path: { type: 'string', description: 'The absolute path' },
    offset: { type: 'number' },
    mode: { type: 'string', enum: ['read', 'write'], default: 'read' },
    encoding: { type: 'string', enum: ['utf8'], nullable: true },
    tags: { type: 'array', nullable: true, items: { type: 'string' } },
  },
  required: ['file_path'],
};

const CHAT_ANSWER = {
  id: 'chatcmpl-schemas',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'upstream-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
};

const RESPONSES_ANSWER = {
  id: 'resp_schemas',
  object: 'response',
  created_at: 1_700_000_000,
  status: 'completed',
  model: 'upstream-model',
  output: [
    {
      type: 'message',
      id: 'msg_schemas',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Done.', annotations: [] }],
    },
  ],
  usage: { input_tokens: 12, output_tokens: 2, total_tokens: 14 },
};

function request(): MessagesRequest {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    tools: [{ name: 'read_file', description: 'Reads a file', input_schema: READ_FILE_SCHEMA }],
    messages: [{ role: 'user', content: 'Read /etc/hostname' }],
  };
}

let upstream: ScriptedServer | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

/** Sends one request over `wire` with `dialect`; the tool schema the server received. */
async function sentSchema(dialect: DialectName, wire: 'chat' | 'responses'): Promise<unknown> {
  upstream = await startScriptedServer([step.json(wire === 'chat' ? CHAT_ANSWER : RESPONSES_ANSWER)]);
  const transport = tpxTransportTo(upstream.url, wire, { tpxDialect: dialect });
  try {
    const message = await transport.send(request());
    expect(message.content).toEqual([{ type: 'text', text: 'Done.' }]);
  } finally {
    await transport.close();
  }
  const body = upstream.requests[0]!.json as {
    tools: { parameters?: unknown; function?: { parameters?: unknown } }[];
  };
  const tool = body.tools[0]!;
  return wire === 'chat' ? tool.function?.parameters : tool.parameters;
}

describe('tool schemas per dialect', () => {
  // Vertex AI serves no Responses API: the transport refuses that wire for it.
  const google = [
    ['gemini', 'chat'],
    ['gemini', 'responses'],
    ['vertex', 'chat'],
  ] as const;
  for (const [dialect, wire] of google) {
    it(`${dialect} over the ${wire} wire: sends the schema in Google's subset, without $schema or refused keywords`, async () => {
      const sent = await sentSchema(dialect, wire);
      expect(sent).toEqual(READ_FILE_GEMINI);
      expect(JSON.stringify(sent)).not.toMatch(
        /"\$schema"|"\$ref"|"definitions"|"additionalProperties"|"exclusiveMinimum"|"const"|"format"/,
      );
    });
  }

  for (const dialect of ['openai', 'vllm', 'llamacpp', 'openai-generic'] as const) {
    for (const wire of ['chat', 'responses'] as const) {
      it(`${dialect} over the ${wire} wire: sends the caller's schema unchanged`, async () => {
        expect(await sentSchema(dialect, wire)).toEqual(READ_FILE_SCHEMA);
      });
    }
  }

  it("leaves the caller's schema as it was after cutting it for Gemini", async () => {
    const before = structuredClone(READ_FILE_SCHEMA);
    await sentSchema('gemini', 'chat');
    expect(READ_FILE_SCHEMA).toEqual(before);
  });
});
