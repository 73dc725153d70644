/**
 * A 20-turn agent conversation through `tpx serve` and the official SDK, against an upstream that gives
 * every tool call of every answer the same id (`call_0`), or none at all, as some servers do. Each turn
 * answers every call and sends the whole history back; every request must go through (no
 * `MODEL_EINVAL`), and on the upstream's side each result must follow its own call one-to-one: the
 * result of the call whose arguments say `n` is `result n`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { chatAnswer } from '../helpers/chat-answers.js';
import {
  startScriptedServer,
  type RecordedRequest,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';
import { tpxTransportTo } from '../helpers/tpx-transport.js';
import { captureLogs } from './serve-support.js';

const TURNS = 20;
const CALLS_PER_TURN = 3;

interface WireMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

/** The turn's answer: `CALLS_PER_TURN` calls, all with id `call_0` on even turns and without an id on odd ones. */
function callsAnswer(turn: number, streaming: boolean): Step {
  const toolCalls = Array.from({ length: CALLS_PER_TURN }, (_, index) => ({
    ...(turn % 2 === 0 ? { id: 'call_0' } : {}),
    name: 'read',
    arguments: JSON.stringify({ n: turn * 10 + index }),
  }));
  return chatAnswer({ id: `chatcmpl-${turn}`, toolCalls }, streaming);
}

/**
 * The pairing the upstream received: for each assistant message with calls, the results right after it,
 * each matched to the call with its id; fails when a result's id names no call or several.
 */
function pairsOf(messages: readonly WireMessage[]): { n: number; result: unknown }[] {
  const pairs: { n: number; result: unknown }[] = [];
  messages.forEach((message, position) => {
    if (message.role !== 'assistant' || message.tool_calls === undefined) return;
    const ids = message.tool_calls.map((call) => call.id);
    expect(new Set(ids).size, `distinct ids in one assistant message: ${ids.join(', ')}`).toBe(ids.length);
    const results = messages.slice(position + 1, position + 1 + ids.length);
    expect(results.map((result) => result.role)).toEqual(ids.map(() => 'tool'));
    for (const result of results) {
      const call = message.tool_calls.find((candidate) => candidate.id === result.tool_call_id);
      expect(call, `a call for result id ${String(result.tool_call_id)}`).toBeDefined();
      const { n } = JSON.parse(call!.function.arguments) as { n: number };
      pairs.push({ n, result: result.content });
    }
  });
  return pairs;
}

describe('a 20-turn conversation over upstream ids that repeat or are missing', () => {
  let upstream: ScriptedServer;
  let transport: ModelTransport;
  let proxy: RunningServer;

  beforeAll(async () => {
    upstream = await startScriptedServer((record: RecordedRequest) => {
      const body = record.json as { messages: WireMessage[]; stream?: boolean };
      const turn = body.messages.filter((message) => message.role === 'assistant').length;
      return turn < TURNS - 1
        ? callsAnswer(turn, body.stream === true)
        : chatAnswer({ content: 'all read' }, false);
    });
    transport = tpxTransportTo(upstream.url, 'chat');
    proxy = await startServer({ transport, port: 0, logger: captureLogs().logger });
  });

  afterAll(async () => {
    await proxy.close();
    await transport.close();
    await upstream.close();
  });

  it('goes through every turn with each result paired to its own call on the upstream', async () => {
    const sdk = new Anthropic({ apiKey: 'unused', baseURL: proxy.url, maxRetries: 0 });
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'read everything' }];
    const tools = [{ name: 'read', description: 'Reads', input_schema: { type: 'object' as const } }];
    for (let turn = 0; turn < TURNS; turn += 1) {
      const params = { model: 'claude-test', max_tokens: 64, tools, messages };
      // Even turns stream, odd turns do not: both paths must keep the ids apart.
      const answer =
        turn % 2 === 0 ? await sdk.messages.stream(params).finalMessage() : await sdk.messages.create(params);
      const calls = answer.content.filter((block) => block.type === 'tool_use');
      if (turn === TURNS - 1) {
        expect(answer.content).toEqual([expect.objectContaining({ type: 'text', text: 'all read' })]);
        break;
      }
      expect(calls).toHaveLength(CALLS_PER_TURN);
      expect(new Set(calls.map((call) => call.id)).size).toBe(CALLS_PER_TURN);
      messages.push({ role: 'assistant', content: answer.content });
      messages.push({
        role: 'user',
        content: calls.map((call) => ({
          type: 'tool_result' as const,
          tool_use_id: call.id,
          content: `result ${(call.input as { n: number }).n}`,
        })),
      });
    }
    expect(upstream.requests).toHaveLength(TURNS);
    const last = upstream.requests.at(-1)!.json as { messages: WireMessage[] };
    const pairs = pairsOf(last.messages);
    expect(pairs).toHaveLength((TURNS - 1) * CALLS_PER_TURN);
    for (const { n, result } of pairs) expect(result).toBe(`result ${n}`);
  });
});
