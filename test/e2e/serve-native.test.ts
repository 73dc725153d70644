/**
 * `tpx serve` on the native path, driven by the official SDK as a real client against a scripted
 * Anthropic-compatible upstream.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport } from '../../src/transport/types.js';
import {
  anthropicSse,
  messageStartEvent,
  startScriptedServer,
  step,
  textMessage,
  textStreamEvents,
  type ScriptedServer,
} from '../helpers/scripted-server.js';
import { captureLogs, eventually, type CapturedLogs } from './serve-support.js';

const UPSTREAM_KEY = 'sk-ant-upstream-startup-key-42';
const CLIENT_KEY = 'sk-ant-client-key-never-forwarded';

let upstream: ScriptedServer;
let transport: ModelTransport;
let server: RunningServer;
let logs: CapturedLogs;

beforeEach(async () => {
  upstream = await startScriptedServer();
  transport = createTransport({
    env: {},
    anthropicApiKey: UPSTREAM_KEY,
    anthropicBaseUrl: upstream.url,
    maxRetries: 0,
  });
  logs = captureLogs();
  server = await startServer({ transport, port: 0, logger: logs.logger });
});

afterEach(async () => {
  await server.close();
  await transport.close();
  await upstream.close();
});

function client(): Anthropic {
  return new Anthropic({ baseURL: server.url, apiKey: CLIENT_KEY, maxRetries: 0 });
}

const HELLO = {
  model: 'claude-test',
  max_tokens: 64,
  messages: [{ role: 'user' as const, content: 'Hello' }],
};

describe('tpx serve in front of Anthropic', () => {
  it('passes a message through and hands back the upstream request-id and rate-limit headers', async () => {
    upstream.push(
      step.json(textMessage('Native hello'), {
        headers: { 'request-id': 'req_upstream_native_1', 'anthropic-ratelimit-requests-remaining': '99' },
      }),
    );
    const { data, response } = await client().messages.create(HELLO).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Native hello' }]);
    expect(response.headers.get('request-id')).toBe('req_upstream_native_1');
    expect(response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('99');
  });

  it('relays a native JSON answer byte for byte, as the upstream wrote it', async () => {
    // Key order, spacing and a field this version does not know: nothing is re-serialised on the way.
    const upstreamText = `{
  "type": "message", "id": "msg_native_bytes", "role": "assistant", "model": "claude-test",
  "content": [{"type": "text", "text": "caf\u00e9 \ud83d\ude00"}],
  "stop_reason": "end_turn", "stop_sequence": null,
  "usage": {"input_tokens": 3, "output_tokens": 2},
  "container": {"id": "future-field"}
}`;
    upstream.push(step.text(200, upstreamText, { 'content-type': 'application/json' }));
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': CLIENT_KEY },
      body: JSON.stringify(HELLO),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(upstreamText);
  });

  it('sends the client bytes, version, beta header and query upstream with the start-up key only', async () => {
    upstream.push(step.json(textMessage()));
    // Claude Code calls `/v1/messages?beta=true` with an `anthropic-beta` header (docs/protocol.md A.0).
    await client().messages.create(HELLO, {
      query: { beta: 'true' },
      headers: { 'anthropic-beta': 'tools-2099-01-01' },
    });
    const recorded = upstream.requests[0]!;
    expect(recorded.url).toBe('/v1/messages?beta=true');
    expect(recorded.headers['x-api-key']).toBe(UPSTREAM_KEY);
    expect(recorded.headers['authorization']).toBeUndefined();
    expect(recorded.headers['anthropic-version']).toBe('2026-10-21');
    expect(recorded.headers['anthropic-beta']).toBe('tools-2099-01-01');
    expect(JSON.stringify(recorded.headers)).not.toContain(CLIENT_KEY);
    expect(recorded.json).toEqual(HELLO);
  });

  it('streams the upstream events to the SDK', async () => {
    upstream.push(step.sse(anthropicSse(textStreamEvents(['Native', ' stream']))));
    const message = await client().messages.stream(HELLO).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Native stream' }]);
  });

  it('passes an upstream 429 with retry-after to the client', async () => {
    upstream.push(
      step.json(
        { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } },
        { status: 429, headers: { 'retry-after': '11', 'request-id': 'req_upstream_429' } },
      ),
    );
    const error = await client()
      .messages.create(HELLO)
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const apiError = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(apiError.headers?.get('retry-after')).toBe('11');
    expect(apiError.requestID).toBe('req_upstream_429');
    expect((apiError.error as { error: { type: string } }).error.type).toBe('rate_limit_error');
  });

  it('passes count_tokens through to the Anthropic endpoint', async () => {
    upstream.push(step.json({ input_tokens: 17 }));
    const count = await client().messages.countTokens(
      { model: 'claude-test', messages: [{ role: 'user', content: 'Hello' }] },
      { query: { beta: 'true' } },
    );
    expect(count.input_tokens).toBe(17);
    expect(upstream.requests[0]!.url).toBe('/v1/messages/count_tokens?beta=true');
    expect(upstream.requests[0]!.json).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'Hello' }],
    });
  });

  it('passes the model list through', async () => {
    const list = {
      data: [
        { type: 'model', id: 'claude-test', display_name: 'Claude Test', created_at: '2026-01-01T00:00:00Z' },
      ],
      has_more: false,
      first_id: 'claude-test',
      last_id: 'claude-test',
    };
    upstream.push(step.json(list));
    const page = await client().models.list();
    expect(page.data).toEqual(list.data);
    expect(upstream.requests[0]!.method).toBe('GET');
    expect(upstream.requests[0]!.url.startsWith('/v1/models')).toBe(true);
  });

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    // The upstream stalls after its first event: only the client's disconnect can end the exchange soon.
    upstream.push(step.sse(anthropicSse([messageStartEvent()]), { then: 'hang' }));
    const stream = await client().messages.create({ ...HELLO, stream: true });
    for await (const event of stream) {
      expect(event.type).toBe('message_start');
      break;
    }
    const recorded = await upstream.settled(0, 2_000);
    expect(recorded.aborted).toBe(true);
    await eventually(() => logs.lines().some((line) => line['msg'] === 'exchange'));
    expect(logs.text()).not.toContain(UPSTREAM_KEY);
    expect(logs.text()).not.toContain(CLIENT_KEY);
  });

  it('ends a stream that fails upstream after its start with an error event the SDK raises', async () => {
    const events = textStreamEvents(['partial']).slice(0, 3);
    const frames = [
      ...anthropicSse(events),
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    ];
    upstream.push(step.sse(frames));
    const error = await client()
      .messages.stream(HELLO)
      .finalMessage()
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(String((error as Error).message)).toContain('overloaded_error');
  });
});
