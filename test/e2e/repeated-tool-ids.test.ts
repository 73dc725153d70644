/**
 * Whatever tool-call ids an upstream gives the calls of one answer — repeated (some servers use one id
 * for every call), empty, missing, or strings that look like this library's own encodings — the caller
 * gets distinct `tool_use` ids, answers every call, and the next request reaches the upstream with each
 * result paired to its own call, one-to-one: the conversation continues. Checked on both wires (Chat:
 * `tool_call_id` of `role:"tool"`; Responses: `call_id` of `function_call_output`), through the
 * library's `send` and `stream` and through `tpx serve` with the official SDK as the client.
 */
import Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContentBlockParam, MessagesRequest } from '../../src/protocol/messages.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import {
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';
import { captureLogs } from './serve-support.js';
import { chatAnswer as scriptedChatAnswer } from '../helpers/chat-answers.js';
import { tpxTransportTo } from '../helpers/tpx-transport.js';

type Wire = 'chat' | 'responses';
type UpstreamId = string | undefined;

/** One call on the upstream's side of the next request: its wire id and the `n` its arguments carry. */
interface SentCall {
  id: string;
  n: number;
}

/**
 * An answer as the caller holds it, whichever way it came (the library's `Message`, the SDK's): only the
 * fields the next turn needs.
 */
interface Delivered {
  content: readonly { type: string; id?: string; input?: unknown; text?: string }[];
}

/** What the upstream received on the turn after the calls: the calls sent back, and each result's id and text. */
interface SentTurn {
  calls: SentCall[];
  results: { id: string; text: string }[];
}

const TOOLS = [{ name: 'read', description: 'Reads', input_schema: { type: 'object' as const } }];

/** Any UTF-16 string: code units drawn freely, so lone surrogates appear. */
const codeUnitString = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
  minLength: 1,
  maxLength: 12,
});

/**
 * Upstream ids: missing, empty, the same few again and again, strings shaped like the codec's own
 * output (`tpx_d2eY2FsbF8w` is what a second `call_0` is shown as; `tpx_ggen1` what the first call
 * without an id gets from a counter), and arbitrary text.
 */
const upstreamId: fc.Arbitrary<UpstreamId> = fc.oneof(
  fc.constant(undefined),
  fc.constant(''),
  fc.constantFrom('call_0', 'call_1', 'functions.read:0'),
  fc.constantFrom('tpx_d2eY2FsbF8w', 'tpx_d3eY2FsbF8w', 'tpx_ggen1', 'tpx_ggen2', 'tpx_eY2FsbF8w'),
  codeUnitString,
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
);
const upstreamIds = fc.array(upstreamId, { minLength: 1, maxLength: 6 });

function chatAnswer(ids: readonly UpstreamId[], streaming: boolean): Step {
  const toolCalls = ids.map((id, index) => ({
    ...(id === undefined ? {} : { id }),
    name: 'read',
    arguments: JSON.stringify({ n: index }),
  }));
  return scriptedChatAnswer({ toolCalls }, streaming);
}

function responsesAnswer(ids: readonly UpstreamId[], streaming: boolean): Step {
  const items = ids.map((id, index) => ({
    type: 'function_call',
    id: `fc_${index}`,
    ...(id === undefined ? {} : { call_id: id }),
    name: 'read',
    arguments: JSON.stringify({ n: index }),
    status: 'completed',
  }));
  const response = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    model: 'served',
    output: items,
    usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
  };
  if (!streaming) return step.json(response);
  const frame = (event: Record<string, unknown> & { type: string }) =>
    `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
  return step.sse([
    frame({ type: 'response.created', response: { ...response, status: 'in_progress', output: [] } }),
    ...items.map((item, index) => frame({ type: 'response.output_item.done', output_index: index, item })),
    frame({ type: 'response.completed', response }),
  ]);
}

function textAnswer(wire: Wire): Step {
  if (wire === 'chat') {
    return step.json({
      id: 'chatcmpl-2',
      object: 'chat.completion',
      model: 'served',
      choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 },
    });
  }
  return step.json({
    id: 'resp_2',
    object: 'response',
    status: 'completed',
    model: 'served',
    output: [
      {
        type: 'message',
        id: 'msg_2',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'done', annotations: [] }],
      },
    ],
    usage: { input_tokens: 9, output_tokens: 1, total_tokens: 10 },
  });
}

function asList(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null)
    : [];
}

function argumentN(text: unknown): number {
  const parsed: unknown = JSON.parse(String(text));
  return typeof parsed === 'object' && parsed !== null && 'n' in parsed ? Number(parsed.n) : -1;
}

/** Reads the calls and results of the upstream request that followed the calls. */
function sentTurn(wire: Wire, body: unknown): SentTurn {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (wire === 'chat') {
    const messages = asList(record['messages']);
    return {
      calls: messages
        .flatMap((message) => asList(message['tool_calls']))
        .map((call) => ({
          id: String(call['id']),
          n: argumentN((call['function'] as Record<string, unknown>)['arguments']),
        })),
      results: messages
        .filter((message) => message['role'] === 'tool')
        .map((message) => ({ id: String(message['tool_call_id']), text: String(message['content']) })),
    };
  }
  const input = asList(record['input']);
  return {
    calls: input
      .filter((item) => item['type'] === 'function_call')
      .map((item) => ({ id: String(item['call_id']), n: argumentN(item['arguments']) })),
    results: input
      .filter((item) => item['type'] === 'function_call_output')
      .map((item) => ({ id: String(item['call_id']), text: String(item['output']) })),
  };
}

/** The next request: the delivered answer, then a result for every call, answered in reverse order. */
function answerEveryCall(first: MessagesRequest, delivered: Delivered): MessagesRequest {
  const calls = toolUses(delivered).map((use): ContentBlockParam => ({
    type: 'tool_use',
    id: use.id,
    name: 'read',
    input: { n: argumentN(JSON.stringify(use.input)) },
  }));
  const results = toolUses(delivered)
    .map((use): ContentBlockParam => ({
      type: 'tool_result',
      tool_use_id: use.id,
      content: `result ${argumentN(JSON.stringify(use.input))}`,
    }))
    .reverse();
  return {
    ...first,
    messages: [...first.messages, { role: 'assistant', content: calls }, { role: 'user', content: results }],
  };
}

function toolUses(delivered: Delivered): { id: string; input: unknown }[] {
  return delivered.content.flatMap((block) =>
    block.type === 'tool_use' && block.id !== undefined ? [{ id: block.id, input: block.input }] : [],
  );
}

/**
 * The law: every call reached the caller with a distinct id; the upstream got every call back once,
 * each under a distinct wire id, and every result under the wire id of its own call (the call whose
 * arguments carry the `n` the result names); a call whose id the upstream gave once, and no earlier
 * call could have taken, goes back under exactly that id.
 */
function expectPaired(ids: readonly UpstreamId[], delivered: Delivered, sent: SentTurn): void {
  const uses = toolUses(delivered);
  expect(uses).toHaveLength(ids.length);
  expect(new Set(uses.map((use) => use.id)).size).toBe(ids.length);
  expect(sent.calls.map((call) => call.n)).toStrictEqual(ids.map((_, index) => index));
  expect(new Set(sent.calls.map((call) => call.id)).size).toBe(ids.length);
  expect(sent.results).toHaveLength(ids.length);
  for (const result of sent.results) {
    const call = sent.calls.find((candidate) => candidate.id === result.id);
    expect(result.text).toBe(`result ${call?.n ?? 'of no call'}`);
  }
  ids.forEach((id, index) => {
    const isOnlyOne = ids.filter((other) => other === id).length === 1;
    if (id !== undefined && id !== '' && isOnlyOne && !id.startsWith('tpx_')) {
      expect(sent.calls[index]!.id).toBe(id);
    }
  });
}

const FIRST: MessagesRequest = {
  model: 'claude-test',
  max_tokens: 64,
  tools: TOOLS,
  messages: [{ role: 'user', content: 'read everything' }],
};

describe.each<Wire>(['chat', 'responses'])('repeated and empty upstream tool ids, %s wire', (wire) => {
  let upstream: ScriptedServer;
  let transport: ModelTransport;
  let proxy: RunningServer;
  /** The ids the upstream gives the calls of its next tool answer; each run sets them. */
  let currentIds: readonly UpstreamId[] = [];

  beforeAll(async () => {
    upstream = await startScriptedServer((record: RecordedRequest) => {
      const bodyText = record.bodyText;
      const isAfterCalls = bodyText.includes('"role":"tool"') || bodyText.includes('function_call_output');
      if (isAfterCalls) return textAnswer(wire);
      const streaming = bodyText.includes('"stream":true');
      return wire === 'chat' ? chatAnswer(currentIds, streaming) : responsesAnswer(currentIds, streaming);
    });
    transport = tpxTransportTo(upstream.url, wire);
    proxy = await startServer({ transport, port: 0, logger: captureLogs().logger });
  });

  afterAll(async () => {
    await proxy.close();
    await transport.close();
    await upstream.close();
  });

  /** Runs `deliver` on the first turn, answers every call through `send`, and checks the law. */
  async function checkConversation(
    ids: readonly UpstreamId[],
    deliver: (request: MessagesRequest) => Promise<Delivered>,
    sendNext: (request: MessagesRequest) => Promise<Delivered>,
  ): Promise<void> {
    currentIds = ids;
    const delivered = await deliver(FIRST);
    const before = upstream.requests.length;
    const next = await sendNext(answerEveryCall(FIRST, delivered));
    expect(next.content).toStrictEqual([{ type: 'text', text: 'done' }]);
    expect(upstream.requests).toHaveLength(before + 1);
    expectPaired(ids, delivered, sentTurn(wire, upstream.requests[before]!.json));
  }

  it('pairs every result with its own call through send', async () => {
    await fc.assert(
      fc.asyncProperty(upstreamIds, (ids) =>
        checkConversation(
          ids,
          (request) => transport.send(request),
          (request) => transport.send(request),
        ),
      ),
      { numRuns: 40 },
    );
  });

  it('pairs every result with its own call through stream', async () => {
    const streamed = async (request: MessagesRequest): Promise<Delivered> => {
      const events = [];
      for await (const event of transport.stream(request)) events.push(event);
      return accumulateStream(events);
    };
    await fc.assert(
      fc.asyncProperty(upstreamIds, (ids) => checkConversation(ids, streamed, streamed)),
      { numRuns: 40 },
    );
  });

  it('pairs every result with its own call through tpx serve, with the SDK as the client', async () => {
    const client = new Anthropic({ baseURL: proxy.url, apiKey: 'client-key', maxRetries: 0 });
    // The requests are built from the library's own Messages types; the SDK takes the same JSON.
    const created = (request: MessagesRequest): Promise<Delivered> =>
      client.messages.create({ ...request, stream: false } as Anthropic.MessageCreateParamsNonStreaming);
    const streamed = (request: MessagesRequest): Promise<Delivered> =>
      client.messages.stream(request as Anthropic.MessageStreamParams).finalMessage();
    await fc.assert(
      fc.asyncProperty(upstreamIds, fc.boolean(), (ids, isStreamed) =>
        checkConversation(ids, isStreamed ? streamed : created, created),
      ),
      { numRuns: 40 },
    );
  });
});
