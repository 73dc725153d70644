/**
 * `tpx mock-model --replay JOURNAL`: a session recorded through `tpx serve --journal DIR` replays
 * offline against the mock model in replay: the same messages (text, tool calls under the same ids,
 * stop reasons, usage), JSON or streamed as each request asks, on both upstream wires; a request that
 * was not recorded gets a 404 naming the nearest recorded one and how it differs.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { startMockModel } from '../../src/mock-model/mock-model.js';
import { runTpx, startTpxMockModel, startTpxServe } from './cli-process.js';

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
];

/** What a replay must give again: everything the caller acts on. */
function essence(message: Anthropic.Message) {
  return {
    content: message.content,
    stop_reason: message.stop_reason,
    usage: message.usage,
    model: message.model,
  };
}

/** An agent's two turns: a streamed tool call, then (with its result) a JSON answer. */
async function session(baseURL: string): Promise<Anthropic.Message[]> {
  const client = new Anthropic({ baseURL, apiKey: 'unused', maxRetries: 0 });
  const question: Anthropic.MessageParam = { role: 'user', content: 'What is 2 + 3? Use the tool.' };
  const first = await client.messages
    .stream({ model: 'claude-sonnet-4-5', max_tokens: 256, tools: TOOLS, messages: [question] })
    .finalMessage();
  const call = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use')!;
  const second = await client.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 256,
    tools: TOOLS,
    messages: [
      question,
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '5' }] },
    ],
  });
  return [first, second];
}

describe.each(['chat', 'responses'] as const)('a session recorded and replayed (%s wire)', (wire) => {
  it('replays offline with the recorded answers, and answers an unrecorded request 404 naming the nearest', async () => {
    const dir = mkdtempSync(join(tmpdir(), `tpx-replay-${wire}-`));
    // The "real" model: ids a real server might use, which tpx must encode for the caller.
    const model = await startMockModel({
      token: 'upstream-token',
      model: 'qwen3-recorded',
      script: {
        replies: [
          {
            reasoning: 'I should add.',
            text: 'Let me add.',
            tool_calls: [{ id: 'functions.add:0', name: 'add', arguments: { a: 2, b: 3 } }],
          },
          { text: '2 + 3 = 5.' },
        ],
      },
    });
    let recorded: Anthropic.Message[];
    const upstreamEnv = (url: string) => ({
      TPX_OAUTH_TOKEN: 'upstream-token',
      TPX_BASE_URL: url,
      TPX_WIRE: wire,
    });
    const recording = await startTpxServe(['--journal', dir], upstreamEnv(model.url));
    try {
      recorded = await session(recording.url);
    } finally {
      await recording.stop();
      await model.close();
    }
    expect(recorded[0]!.content.find((block) => block.type === 'tool_use')).toMatchObject({
      id: expect.stringMatching(/^tpx_e/),
      input: { a: 2, b: 3 },
    });

    const replay = await startTpxMockModel(['--replay', dir, '--token', 'upstream-token']);
    const replaying = await startTpxServe([], upstreamEnv(replay.url));
    try {
      const replayed = await session(replaying.url);
      expect(replayed.map(essence)).toEqual(recorded.map(essence));
      // Twice: deterministic. (On the Responses wire, a second run in the same mock numbers its reasoning
      // items on, so the thinking signatures differ: see docs/journal.md.)
      if (wire === 'chat') expect((await session(replaying.url)).map(essence)).toEqual(recorded.map(essence));

      // What the mock model in replay says of a request it has no recording for, asked directly.
      const direct = await fetch(`${replay.url}/${wire === 'chat' ? 'chat/completions' : 'responses'}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer upstream-token' },
        body: JSON.stringify(
          wire === 'chat'
            ? {
                model: 'claude-sonnet-4-5',
                messages: [{ role: 'user', content: 'What is 2 + 4? Use the tool.' }],
              }
            : {
                model: 'claude-sonnet-4-5',
                input: [{ role: 'user', content: 'What is 2 + 4? Use the tool.' }],
              },
        ),
      });
      expect(direct.status).toBe(404);
      const { error } = (await direct.json()) as { error: { message: string; code: string } };
      expect(error.code).toBe('replay_not_recorded');
      expect(error.message).toMatch(/the nearest recorded one is exchange req_\S+ \(.*tpx-.*\.jsonl:1\)/);
      expect(error.message).toContain('received "What is 2 + 4? Use the tool."');

      // Through tpx serve, the caller gets an error that carries the reason.
      const client = new Anthropic({ baseURL: replaying.url, apiKey: 'unused', maxRetries: 0 });
      const failure = await client.messages
        .create({
          model: 'claude-sonnet-4-5',
          max_tokens: 256,
          messages: [{ role: 'user', content: 'Something else' }],
        })
        .catch((caught: unknown) => caught);
      expect(failure).toBeInstanceOf(Anthropic.APIError);
      expect((failure as InstanceType<typeof Anthropic.APIError>).status).toBe(404);
      expect(String((failure as InstanceType<typeof Anthropic.APIError>).message)).toContain('not recorded');
    } finally {
      await replaying.stop();
      replay.child.kill('SIGTERM');
    }
  });
});

describe('tpx mock-model --replay', () => {
  it('refuses a journal that cannot be read, with a usage error', async () => {
    const result = await runTpx(['mock-model', '--replay', join(tmpdir(), 'no-such-journal-dir')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot read the journal');
  });
});
