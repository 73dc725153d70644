/**
 * `tpx claude` as a process against a real llama.cpp server: the stand-in for Claude Code
 * (`test/e2e/fixtures/claude-stand-in.mjs`) sends Claude Code's request sequence — the `HEAD /` probe, a
 * haiku-tier title call, then the streamed agent loop with Claude Code's tools and `max_tokens: 32000` —
 * through the proxy `tpx claude` starts, and a recording tap between tpx and the server shows what crossed
 * the wire. The tiny model answers text at once when the choice is its own, so the stand-in asks for a
 * tool on its first turn (`--first-tool-choice any`) and leaves the second to the model: one tool round,
 * then the answer. Nothing here looks at the model's words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTpx, STAND_IN } from '../e2e/cli-process.js';
import { startLlamaServer, type LlamaServer } from './llama-server.js';
import { startRecordingTap, type RecordingTap, type TappedExchange } from './recording-tap.js';

const CONTEXT_SIZE = 4096;

let server: LlamaServer;
let tap: RecordingTap;

beforeAll(async () => {
  server = await startLlamaServer({ model: 'tiny-tools', contextSize: CONTEXT_SIZE });
  tap = await startRecordingTap(server.url);
});

afterAll(async () => {
  await tap?.close();
  await server?.stop();
});

interface ChatRequest {
  model: string;
  max_tokens: number;
  stream?: boolean;
  tool_choice?: unknown;
  messages: { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
}

/** The tool-call ids the server made in a streamed Chat Completions answer. */
function streamedToolCallIds(exchange: TappedExchange): string[] {
  const ids: string[] = [];
  for (const line of exchange.response.text.split('\n')) {
    if (!line.startsWith('data:') || line.includes('[DONE]')) continue;
    const chunk = JSON.parse(line.slice(5)) as {
      choices: { delta?: { tool_calls?: { id?: string }[] } }[];
    };
    for (const call of chunk.choices[0]?.delta?.tool_calls ?? []) if (call.id) ids.push(call.id);
  }
  return ids;
}

describe('tpx claude against a real llama.cpp server', () => {
  it(
    'completes a Claude Code-shaped session with a paired tool round, capped to the context window',
    { timeout: 90_000 },
    async () => {
      const before = tap.exchanges.length;
      const result = await runTpx(
        [
          'claude',
          '--base-url',
          `${tap.url}/v1`,
          '--token',
          'local',
          '--dialect',
          'llamacpp',
          '--claude-bin',
          STAND_IN,
          '-p',
          '--first-tool-choice',
          'any',
          'look around and say hi',
        ],
        {},
        { timeoutMs: 60_000 },
      );
      expect(result.stderr).toContain('stand-in: 2 turn(s), 1 tool round(s), stop_reason end_turn');
      expect(result.code).toBe(0);
      // The banner says what it learned from the server: its one model and its context window.
      expect(result.stderr).toContain(`upstream models: ${server.modelPath}`);
      expect(result.stderr).toContain(`context window: ${CONTEXT_SIZE} tokens (from ${tap.url}/props)`);

      const chats = tap.exchanges
        .slice(before)
        .filter((exchange) => exchange.request.url === '/v1/chat/completions');
      // The title call, the turn that calls tools, the turn that answers.
      expect(chats).toHaveLength(3);
      for (const exchange of chats) {
        expect(exchange.response.status).toBe(200);
        const sent = exchange.request.json as ChatRequest;
        // Claude's model names map to the server's only model.
        expect(sent.model).toBe(server.modelPath);
        // Claude Code's max_tokens (32000 on the agent loop) never reaches a 4096-token server as it is.
        expect(sent.max_tokens).toBeGreaterThan(0);
        expect(sent.max_tokens).toBeLessThan(CONTEXT_SIZE);
      }
      const [, toolTurn, answerTurn] = chats as [TappedExchange, TappedExchange, TappedExchange];
      expect((toolTurn.request.json as ChatRequest).tool_choice).toBe('required');
      const issued = streamedToolCallIds(toolTurn);
      expect(issued.length).toBeGreaterThan(0);
      // The next turn gives the server its own ids back: on the assistant turn and on each tool result.
      const answerMessages = (answerTurn.request.json as ChatRequest).messages;
      const echoedCalls = answerMessages
        .filter((message) => message.role === 'assistant')
        .flatMap((message) => (message.tool_calls ?? []).map((call) => call.id));
      const results = answerMessages
        .filter((message) => message.role === 'tool')
        .map((message) => message.tool_call_id);
      expect(echoedCalls).toEqual(issued);
      expect(results).toEqual(issued);
    },
  );
});
