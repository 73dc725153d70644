/**
 * The scripted upstreams' side of the conformance replay (`replay.ts`): the ids a provider writes, its
 * answers carrying them (JSON or SSE, Chat Completions or Messages), and the failures it produces.
 *
 * @module
 */
import type { ToolParam } from '../../src/index.js';
import {
  anthropicSse,
  openAiSse,
  step as serverStep,
  type Step as ServerStep,
} from '../helpers/scripted-server.js';

export type ReplayMode = 'send' | 'stream';

/** The ways the scripted provider fails an exchange, used in rotation. */
export const FAILURE_KINDS = ['reset', 'timeout', '5xx', 'malformed'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export type ServerName = 'tpx' | 'anthropic';

/** The `tpx` provider's wire: Chat Completions, or the OpenAI Responses API (`TPX_WIRE=responses`). */
export type ReplayWire = 'chat' | 'responses';

/** The one tool every replayed request offers. */
export const TOOL: ToolParam = {
  name: 'lookup',
  description: 'Looks a word up in the dictionary.',
  input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
};

/**
 * The id a provider writes for model id number `n` (1-based) emitted in turn `turn`: four styles in
 * rotation, three of which the codec must encode — a Kimi-style `functions.lookup:0`, an id with a space
 * and a slash, one longer than 200 characters — and a plain `call_…` it passes through. Unique per
 * behaviour, so a provider id names one model id.
 */
export function providerToolId(server: ServerName, n: number, turn: number): string {
  if (server === 'anthropic') return `toolu_01Rp${turn}${n}XgKq7vLw2N`;
  switch ((n - 1 + turn) % 4) {
    case 0:
      return `functions.lookup:${turn}${n}`;
    case 1:
      return `call ${turn}${n}/abc`;
    case 2:
      return `call_${turn}${n}_${'x'.repeat(240)}`;
    default:
      return `call_${turn}${n}Qx7`;
  }
}

/** One tool call the provider makes. */
export interface Call {
  id: string;
  input: Record<string, unknown>;
}

/** The provider's answer to one request: some text, then one tool call per `calls` entry. */
export function replyStep(
  server: ServerName,
  mode: ReplayMode,
  calls: readonly Call[],
  tag: string,
  wire: ReplayWire = 'chat',
): ServerStep {
  const text = calls.length > 0 ? 'Let me look that up.' : 'It means what it says.';
  if (server === 'tpx' && wire === 'responses') return responsesReplyStep(mode, calls, tag, text);
  if (server === 'tpx') {
    const base = {
      id: `chatcmpl-${tag}`,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'replay-upstream',
    };
    const finishReason = calls.length > 0 ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: 31, completion_tokens: 9, total_tokens: 40 };
    if (mode === 'send') {
      return serverStep.json({
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: text,
              ...(calls.length > 0
                ? {
                    tool_calls: calls.map((call) => ({
                      id: call.id,
                      type: 'function',
                      function: { name: TOOL.name, arguments: JSON.stringify(call.input) },
                    })),
                  }
                : {}),
            },
            finish_reason: finishReason,
            logprobs: null,
          },
        ],
        usage,
      });
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    return serverStep.sse(
      openAiSse([
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: text }),
        ...calls.flatMap((call, index) => {
          const json = JSON.stringify(call.input);
          return [
            chunk({
              tool_calls: [
                { index, id: call.id, type: 'function', function: { name: TOOL.name, arguments: '' } },
              ],
            }),
            chunk({ tool_calls: [{ index, function: { arguments: json.slice(0, 5) } }] }),
            chunk({ tool_calls: [{ index, function: { arguments: json.slice(5) } }] }),
          ];
        }),
        chunk({}, finishReason),
        { ...base, choices: [], usage },
      ]),
    );
  }
  const stopReason = calls.length > 0 ? 'tool_use' : 'end_turn';
  if (mode === 'send') {
    return serverStep.json({
      id: `msg_01${tag}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-replay',
      content: [
        { type: 'text', text },
        ...calls.map((call) => ({ type: 'tool_use', id: call.id, name: TOOL.name, input: call.input })),
      ],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 31, output_tokens: 9 },
    });
  }
  const events: { type: string; [key: string]: unknown }[] = [
    {
      type: 'message_start',
      message: {
        id: `msg_01${tag}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-replay',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 31, output_tokens: 0 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    { type: 'content_block_stop', index: 0 },
    ...calls.flatMap((call, position) => {
      const index = position + 1;
      const json = JSON.stringify(call.input);
      return [
        {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: call.id, name: TOOL.name, input: {} },
        },
        {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: json.slice(0, 5) },
        },
        {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: json.slice(5) },
        },
        { type: 'content_block_stop', index },
      ];
    }),
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 9 },
    },
    { type: 'message_stop' },
  ];
  return serverStep.sse(anthropicSse(events));
}

/** The answer of a Responses API server: an assistant message, then one function call per `calls` entry. */
function responsesReplyStep(mode: ReplayMode, calls: readonly Call[], tag: string, text: string): ServerStep {
  const message = {
    type: 'message',
    id: `msg_${tag}`,
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
  const functionCalls = calls.map((call, index) => ({
    type: 'function_call',
    id: `fc_${tag}_${index}`,
    call_id: call.id,
    name: TOOL.name,
    arguments: JSON.stringify(call.input),
    status: 'completed',
  }));
  const response = {
    id: `resp_${tag}`,
    object: 'response',
    status: 'completed',
    model: 'replay-upstream',
    output: [message, ...functionCalls],
    usage: { input_tokens: 31, output_tokens: 9, total_tokens: 40 },
  };
  if (mode === 'send') return serverStep.json(response);
  const events: Record<string, unknown>[] = [
    { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } },
    { type: 'response.output_item.added', output_index: 0, item: { ...message, content: [] } },
    { type: 'response.output_text.delta', output_index: 0, item_id: message.id, delta: text },
    { type: 'response.output_item.done', output_index: 0, item: message },
    ...functionCalls.flatMap((call, index) => [
      { type: 'response.output_item.added', output_index: index + 1, item: { ...call, arguments: '' } },
      {
        type: 'response.function_call_arguments.delta',
        output_index: index + 1,
        item_id: call.id,
        delta: call.arguments.slice(0, 5),
      },
      {
        type: 'response.function_call_arguments.delta',
        output_index: index + 1,
        item_id: call.id,
        delta: call.arguments.slice(5),
      },
      { type: 'response.output_item.done', output_index: index + 1, item: call },
    ]),
    { type: 'response.completed', response },
  ];
  return serverStep.sse(responsesSse(events));
}

/** SSE frames of Responses events, `event:` line and all. */
function responsesSse(events: readonly Record<string, unknown>[]): string[] {
  return events.map((event, index) => {
    const numbered = { ...event, sequence_number: index };
    return `event: ${String(event['type'])}\ndata: ${JSON.stringify(numbered)}\n\n`;
  });
}

/** How the provider fails one request. */
export function failureStep(
  failure: FailureKind,
  server: ServerName,
  mode: ReplayMode,
  wire: ReplayWire = 'chat',
): ServerStep {
  switch (failure) {
    case 'reset':
      return serverStep.reset('before-headers');
    case 'timeout':
      return serverStep.noHeaders();
    case '5xx':
      return server === 'tpx'
        ? serverStep.json(
            {
              error: {
                message: 'The server had an error while processing your request.',
                type: 'server_error',
                param: null,
                code: null,
              },
            },
            { status: 503 },
          )
        : serverStep.json(
            { type: 'error', error: { type: 'api_error', message: 'Internal server error' } },
            { status: 503 },
          );
    case 'malformed':
      if (mode === 'send') {
        return serverStep.text(
          200,
          server === 'tpx'
            ? '{"id":"chatcmpl-broken","choices":[{"index":0,'
            : '{"id":"msg_broken","type":"mess',
          {
            'content-type': 'application/json',
          },
        );
      }
      // A valid start, so the caller has the first event when the stream breaks.
      if (server === 'tpx' && wire === 'responses') {
        return serverStep.sse([
          ...responsesSse([
            { type: 'response.created', response: { id: 'resp_broken', status: 'in_progress', output: [] } },
            { type: 'response.output_text.delta', output_index: 0, item_id: 'msg_broken', delta: 'Let me' },
          ]),
          'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_\n\n',
        ]);
      }
      if (server === 'tpx') {
        const first = {
          id: 'chatcmpl-broken',
          object: 'chat.completion.chunk',
          created: 1_700_000_000,
          model: 'replay-upstream',
          choices: [{ index: 0, delta: { role: 'assistant', content: 'Let me' }, finish_reason: null }],
        };
        return serverStep.sse([
          `data: ${JSON.stringify(first)}\n\n`,
          'data: {"id":"chatcmpl-broken","object":"chat.completion.chunk","choices":[{"index\n\n',
        ]);
      }
      return serverStep.sse([
        ...anthropicSse([
          {
            type: 'message_start',
            message: {
              id: 'msg_01Broken',
              type: 'message',
              role: 'assistant',
              model: 'claude-replay',
              content: [],
              stop_reason: null,
              stop_sequence: null,
              usage: { input_tokens: 31, output_tokens: 0 },
            },
          },
        ]),
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_bl\n\n',
      ]);
  }
}
