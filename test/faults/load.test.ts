/**
 * Load: 200 conversations at once through `tpx serve` in front of `tpx mock-model`, each a streamed
 * tool-use turn and a streamed answer to its tool results. Every stream must complete as a valid event
 * sequence; every tool id must be valid and unique across all conversations, and must map back to its
 * call (the mock model names each result by the function of the call its id points to); every answer
 * must carry its own conversation's results and no other's.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createTransport, type Message, type MessageStreamEvent } from '../../src/index.js';
import { startMockModel } from '../../src/mock-model/index.js';
import type { ToolUseBlock } from '../../src/protocol/messages.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { startServer } from '../../src/server/start-server.js';
import { sdkOverAgent } from './fault-harness.js';

const CONVERSATIONS = 200;
/** Far above what the run takes; reaching it means something queued up or hung. */
const TIME_LIMIT_MS = 30_000;
const TOOLS: Anthropic.Tool[] = [
  {
    name: 'add',
    description: 'Adds two numbers',
    input_schema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
  {
    name: 'lookup',
    description: 'Looks a word up',
    input_schema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  },
];

function activeSockets(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length;
}

/** Streams one request and folds its events, checking their order on the way. */
async function streamed(client: Anthropic, params: Anthropic.MessageCreateParamsStreaming): Promise<Message> {
  const events: MessageStreamEvent[] = [];
  const grammar = createStreamGrammar();
  for await (const event of await client.messages.create(params)) {
    const current = event as unknown as MessageStreamEvent;
    expect(grammar.accept(current)).toBeUndefined();
    events.push(current);
  }
  expect(grammar.end()).toBeUndefined();
  return accumulateStream(events);
}

describe('tpx serve under load', () => {
  it(`completes ${CONVERSATIONS} concurrent tool-use conversations, streamed, all correct`, async () => {
    const socketsBefore = activeSockets();
    const mock = await startMockModel({ token: 'load-mock-token' });
    const transport = createTransport({
      env: {},
      tpxToken: 'load-mock-token',
      tpxBaseUrl: mock.url,
      maxRetries: 0,
    });
    const server = await startServer({ transport, port: 0, logger: false });
    const agent = new Agent({ connections: CONVERSATIONS });
    const client = sdkOverAgent(agent, {
      baseURL: server.url,
      apiKey: 'unused',
      maxRetries: 0,
      timeout: TIME_LIMIT_MS,
    });
    const startedAt = performance.now();
    try {
      const conversation = async (index: number) => {
        const question = {
          role: 'user' as const,
          content: `Conversation ${index}: add and look up, please.`,
        };
        const first = await streamed(client, {
          model: 'claude-test',
          max_tokens: 256,
          stream: true,
          tools: TOOLS,
          messages: [question],
        });
        expect(first.stop_reason).toBe('tool_use');
        const calls = first.content.flatMap((block) =>
          block.type === 'tool_use' ? [block as ToolUseBlock] : [],
        );
        expect(calls.map((call) => call.name)).toEqual(['add', 'lookup']);
        expect(calls[0]!.input).toEqual({ a: expect.any(Number), b: expect.any(Number) });
        expect(calls[1]!.input).toEqual({ word: expect.any(String) });
        for (const call of calls) expect(call.id).toMatch(/^[A-Za-z0-9_-]+$/);

        const second = await streamed(client, {
          model: 'claude-test',
          max_tokens: 256,
          stream: true,
          tools: TOOLS,
          messages: [
            question,
            { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] },
            {
              role: 'user',
              content: calls.map((call) => ({
                type: 'tool_result' as const,
                tool_use_id: call.id,
                content: `result-${index}-${call.name}`,
              })),
            },
          ],
        });
        expect(second.stop_reason).toBe('end_turn');
        const text = second.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
        // Each result is named by its call's function: the ids went out and came back intact.
        expect(text).toBe(`The tools answered: add → result-${index}-add; lookup → result-${index}-lookup`);
        return calls.map((call) => call.id);
      };

      const ids = (
        await Promise.all(Array.from({ length: CONVERSATIONS }, (_, index) => conversation(index)))
      ).flat();
      const elapsedMs = performance.now() - startedAt;
      expect(ids).toHaveLength(CONVERSATIONS * 2);
      expect(new Set(ids).size).toBe(ids.length);
      expect(mock.requests).toHaveLength(CONVERSATIONS * 2);
      expect(mock.requests.filter((request) => request.aborted)).toEqual([]);
      expect(elapsedMs).toBeLessThan(TIME_LIMIT_MS);
    } finally {
      await agent.close();
      await server.close();
      await transport.close();
      await mock.close();
    }
    // Everything opened for the run is closed again.
    const deadline = Date.now() + 2_000;
    while (activeSockets() > socketsBefore && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(activeSockets()).toBeLessThanOrEqual(socketsBefore);
  });
});
