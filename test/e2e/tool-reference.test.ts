/**
 * Claude Code's ToolSearch answers with `tool_reference` blocks inside a `tool_result`
 * (`{"type":"tool_reference","tool_name":"…"}`): on the `tpx` provider each reaches the upstream as a
 * line of text naming the tool as the upstream knows it, on both wires; a malformed one is refused
 * before anything is sent. Through the library's `send` against a scripted upstream on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/errors.js';
import type { MessagesRequest } from '../../src/protocol/messages.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';
import { tpxTransportTo } from '../helpers/tpx-transport.js';

type Wire = 'chat' | 'responses';

/** A tool name over the 64 characters a function name may have upstream, so it is sent renamed. */
const LONG_NAME = `mcp__tracker__${'x'.repeat(60)}`;

function toolSearchTurn(referenceBlocks: unknown[]): MessagesRequest {
  const tool = (name: string) => ({ name, input_schema: { type: 'object' as const } });
  return {
    model: 'claude-test',
    max_tokens: 64,
    tools: [
      tool('ToolSearch'),
      { ...tool('mcp__github__create_issue'), defer_loading: true },
      { ...tool(LONG_NAME), defer_loading: true },
    ],
    messages: [
      { role: 'user', content: 'file an issue' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_01', name: 'ToolSearch', input: { query: 'issue' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            // The SDK's own types do not list tool_reference yet; the proxy takes the JSON as it is.
            content: referenceBlocks as [],
          },
        ],
      },
    ],
  };
}

function textAnswer(wire: Wire) {
  if (wire === 'chat') {
    return step.json({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'served',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    });
  }
  return step.json({
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    model: 'served',
    output: [
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'ok', annotations: [] }],
      },
    ],
  });
}

/** What the upstream got as the ToolSearch call's result: the Chat tool message's content, or the output. */
function sentResult(wire: Wire, body: unknown): unknown {
  const record = body as { messages?: Record<string, unknown>[]; input?: Record<string, unknown>[] };
  if (wire === 'chat') return record.messages?.find((message) => message['role'] === 'tool')?.['content'];
  return record.input?.find((item) => item['type'] === 'function_call_output')?.['output'];
}

describe.each<Wire>(['chat', 'responses'])('tool_reference blocks in a tool_result, %s wire', (wire) => {
  let upstream: ScriptedServer;
  let transport: ModelTransport;

  beforeAll(async () => {
    upstream = await startScriptedServer(() => textAnswer(wire));
    transport = tpxTransportTo(upstream.url, wire);
  });

  afterAll(async () => {
    await transport.close();
    await upstream.close();
  });

  it('sends each referenced tool as a line naming it as the upstream knows it', async () => {
    const before = upstream.requests.length;
    const message = await transport.send(
      toolSearchTurn([
        { type: 'text', text: 'Found 2 tools.' },
        { type: 'tool_reference', tool_name: 'mcp__github__create_issue' },
        { type: 'tool_reference', tool_name: LONG_NAME, cache_control: { type: 'ephemeral' } },
      ]),
    );
    expect(message.content).toStrictEqual([{ type: 'text', text: 'ok' }]);
    const body = upstream.requests[before]!.json as Record<string, unknown>;
    // The long name goes upstream renamed; the reference names the tool by that same function name.
    const functionNames = JSON.stringify(body['tools']);
    const renamed = /"(mcp__tracker__x+_h[0-9a-f]{16})"/.exec(functionNames)?.[1];
    expect(renamed).toBeDefined();
    expect(sentResult(wire, body)).toBe(
      `Found 2 tools.\nTool available: mcp__github__create_issue\nTool available: ${renamed}`,
    );
  });

  it.each<[string, Record<string, unknown>]>([
    ['without tool_name', { type: 'tool_reference' }],
    ['with an empty tool_name', { type: 'tool_reference', tool_name: '' }],
    ['with a space in tool_name', { type: 'tool_reference', tool_name: 'has space' }],
    ['with a number as tool_name', { type: 'tool_reference', tool_name: 7 }],
    ['with a tool_name of 257 characters', { type: 'tool_reference', tool_name: 'a'.repeat(257) }],
  ])('refuses a reference %s with MODEL_EINVAL naming where it is, sending nothing', async (_case, block) => {
    const before = upstream.requests.length;
    const error = await transport.send(toolSearchTurn([block])).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).code).toBe('MODEL_EINVAL');
    expect((error as TransportError).message).toMatch(
      /^messages\[2\]\.content\[0\]\.content\[0\]\.tool_name must be a tool name of 1 to 256 characters from \[a-zA-Z0-9_-\], got /,
    );
    expect(upstream.requests).toHaveLength(before);
  });
});
