/**
 * Tool-call arguments that are almost JSON — what weak local models write — reach the caller repaired,
 * with string scalars fitted to the tool's `input_schema` where that is unambiguous, and never with a
 * field the model did not write; arguments beyond repair fail with `MODEL_EPROTO` naming the tool. On
 * both wires of the `tpx` provider, through the library's `send` and `stream` against a scripted upstream
 * on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/errors.js';
import type { Message, MessagesRequest } from '../../src/protocol/messages.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import {
  openAiSse,
  startScriptedServer,
  step,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';
import { tpxTransportTo } from '../helpers/tpx-transport.js';

type Wire = 'chat' | 'responses';
type Mode = 'send' | 'stream';

const REQUEST: MessagesRequest = {
  model: 'claude-test',
  max_tokens: 256,
  messages: [{ role: 'user', content: 'weather?' }],
  tools: [
    {
      name: 'get_weather',
      input_schema: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          days: { type: 'integer' },
          verbose: { type: 'boolean' },
          unit: { type: 'string' },
        },
        required: ['city', 'unit'],
      },
    },
  ],
};

/** The upstream's answer: one call of `get_weather` whose arguments arrive as `fragments`, in order. */
function toolCallAnswer(wire: Wire, mode: Mode, fragments: readonly string[]): Step {
  const argumentsText = fragments.join('');
  if (wire === 'chat') {
    if (mode === 'send') {
      return step.json({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'served',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'get_weather', arguments: argumentsText },
                },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      });
    }
    const chunk = (delta: unknown, finishReason: string | null) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      model: 'served',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
    return step.sse(
      openAiSse([
        chunk({ role: 'assistant', content: null }, null),
        chunk(
          {
            tool_calls: [
              { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
            ],
          },
          null,
        ),
        ...fragments.map((fragment) =>
          chunk({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }, null),
        ),
        chunk({}, 'tool_calls'),
      ]),
    );
  }
  const item = {
    type: 'function_call',
    id: 'fc_1',
    call_id: 'call_1',
    name: 'get_weather',
    arguments: argumentsText,
    status: 'completed',
  };
  const response = { id: 'resp_1', object: 'response', status: 'completed', model: 'served', output: [item] };
  if (mode === 'send') return step.json(response);
  const frame = (event: Record<string, unknown> & { type: string }) =>
    `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
  return step.sse([
    frame({ type: 'response.created', response: { ...response, status: 'in_progress', output: [] } }),
    frame({ type: 'response.output_item.added', output_index: 0, item: { ...item, arguments: '' } }),
    ...fragments.map((delta) =>
      frame({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta }),
    ),
    frame({ type: 'response.output_item.done', output_index: 0, item }),
    frame({ type: 'response.completed', response }),
  ]);
}

async function exchange(transport: ModelTransport, mode: Mode): Promise<Message> {
  if (mode === 'send') return transport.send(REQUEST);
  const events = [];
  for await (const event of transport.stream({ ...REQUEST, stream: true })) events.push(event);
  return accumulateStream(events);
}

function toolInput(message: Message): unknown {
  const block = message.content.find((candidate) => candidate.type === 'tool_use');
  return block?.type === 'tool_use' ? block.input : undefined;
}

describe.each<[Wire, Mode]>([
  ['chat', 'send'],
  ['chat', 'stream'],
  ['responses', 'send'],
  ['responses', 'stream'],
])('tool arguments repaired, never invented: %s wire, %s', (wire, mode) => {
  let upstream: ScriptedServer;
  let transport: ModelTransport;
  let fragments: readonly string[] = [];

  beforeAll(async () => {
    upstream = await startScriptedServer(() => toolCallAnswer(wire, mode, fragments));
    transport = tpxTransportTo(upstream.url, wire);
  });

  afterAll(async () => {
    await transport.close();
    await upstream.close();
  });

  it('repairs single quotes, trailing commas, comments, raw newlines and Python literals', async () => {
    fragments = [
      "{'city': 'Par",
      "is', // the capital\n 'unit': 'C\nplease', 'verbose': Tr",
      'ue, "x": None,}',
    ];
    const message = await exchange(transport, mode);
    expect(message.stop_reason).toBe('tool_use');
    expect(toolInput(message)).toStrictEqual({ city: 'Paris', unit: 'C\nplease', verbose: true, x: null });
  });

  it('repairs a trailing comma after valid JSON already on its way', async () => {
    fragments = ['{"city": "Paris",', ' "unit": "C",', '}'];
    expect(toolInput(await exchange(transport, mode))).toStrictEqual({ city: 'Paris', unit: 'C' });
  });

  it('fits string scalars to the schema where unambiguous, and adds no field the model left out', async () => {
    // Single-quoted, so that no stream could have shown the arguments before they were read whole.
    fragments = ["{'city': '12', 'days': '3', 'verbose': 'true'}"];
    expect(toolInput(await exchange(transport, mode))).toStrictEqual({ city: '12', days: 3, verbose: true });
  });

  it('refuses arguments beyond repair with MODEL_EPROTO naming the tool, never delivering {}', async () => {
    fragments = ['{"city": ', '}'];
    const error = await exchange(transport, mode).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).code).toBe('MODEL_EPROTO');
    expect((error as TransportError).message).toMatch(/name "get_weather".*not valid JSON/);
  });
});

describe.each<Wire>(['chat', 'responses'])('scalars fitted in a whole answer: %s wire', (wire) => {
  let upstream: ScriptedServer;
  let transport: ModelTransport;

  beforeAll(async () => {
    upstream = await startScriptedServer(() =>
      toolCallAnswer(wire, 'send', ['{"city": "Paris", "days": "3", "verbose": "false", "unit": "7"}']),
    );
    transport = tpxTransportTo(upstream.url, wire);
  });

  afterAll(async () => {
    await transport.close();
    await upstream.close();
  });

  it('turns "3" into 3 for an integer and "false" into false for a boolean, and leaves strings alone', async () => {
    expect(toolInput(await transport.send(REQUEST))).toStrictEqual({
      city: 'Paris',
      days: 3,
      verbose: false,
      unit: '7',
    });
  });
});
