/**
 * Scale-out behind a real load balancer: HAProxy (Debian's package, with `deploy/haproxy/haproxy.cfg`)
 * in front of three `tpx serve` processes, round robin with health checks on `/readyz`, all on
 * loopback in front of one mock model.
 *
 * - A 20-turn tool conversation whose turns land on different replicas completes with every tool id
 *   paired: the id codec is stateless, so a replica decodes what another one encoded.
 * - A stream whose upstream is silent for longer than the balancer's idle timeout survives it on pings;
 *   a JSON answer that silent does not (the timeout is real).
 * - A replica killed with SIGKILL mid-stream leaves that client a clean failure, and the next requests
 *   succeed on the others.
 * - A rolling restart (SIGTERM, drain, start, one replica at a time) under steady load loses no exchange.
 *
 * The timeouts are short (a 2 s idle timeout, 150 ms health checks) so that the whole file runs in
 * seconds.
 */
import Anthropic from '@anthropic-ai/sdk';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { waitFor } from '../helpers/wait-for.js';
import { ChildProcesses, startReplica as startTracked, type Replica } from './child-processes.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const HAPROXY_CONFIG = fileURLToPath(new URL('../../deploy/haproxy/haproxy.cfg', import.meta.url));
const UPSTREAM_TOKEN = 'scale-out-upstream-token';
/** The balancer's idle timeout: shorter than the silences below. */
const LB_TIMEOUT_MS = 2_000;
const PING_INTERVAL_MS = 250;
const CHECK_INTERVAL_MS = 150;
/** Long enough for the balancer to see /readyz fail (a few checks) before the replica stops accepting. */
const DRAIN_DELAY_MS = 600;
/**
 * How long a replica may take to get ready. A quiet machine starts one in about a second; a 2-core
 * machine shared with other heavy work has been seen to take 40 s.
 */
const READY_TIMEOUT_MS = 60_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const TURNS = 20;
/** An upstream tool id a Messages client could not use as it is: the replicas must encode it. */
const upstreamToolId = (index: number) => `call:${index}/weather ü`;
const SILENCE_MS = LB_TIMEOUT_MS + 1_000;
const KILLED_TEXT = 'a b c d e f g h i j k l m n o p q r s t';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every process this file starts, stopped in `afterAll` whatever happened. */
const children = new ChildProcesses();
let mock: MockModelServer;
let replicas: Replica[] = [];
let haproxy: ChildProcess | undefined;
let haproxyOutput = '';
let lbUrl = '';

function startReplica(port: number): Promise<Replica> {
  return startTracked(children, {
    cli: CLI,
    port,
    args: [
      '--ping-interval',
      String(PING_INTERVAL_MS),
      '--drain-delay',
      String(DRAIN_DELAY_MS),
      '--shutdown-grace',
      '5000',
    ],
    env: { PATH: process.env['PATH'], TPX_OAUTH_TOKEN: UPSTREAM_TOKEN, TPX_BASE_URL: mock.url },
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
}

/** Scrapes one replica directly (not through the balancer). */
async function scrape(replica: Replica): Promise<string> {
  return (await fetch(`http://127.0.0.1:${replica.port}/metrics`)).text();
}

function sum(text: string, name: string, filter: (line: string) => boolean = () => true): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && filter(line))
    .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

function client(): Anthropic {
  return new Anthropic({ baseURL: lbUrl, apiKey: 'unused', maxRetries: 0, timeout: 15_000 });
}

beforeAll(async () => {
  const found = spawnSync('haproxy', ['-v'], { encoding: 'utf8' });
  if (found.error !== undefined) {
    throw new Error('haproxy is not installed: apt-get install -y haproxy (.ci/run installs it)');
  }
  // One script for the whole file, in the order the tests below consume it; after it, the mock model's
  // default answers.
  mock = await startMockModel({
    token: UPSTREAM_TOKEN,
    script: {
      replies: [
        ...Array.from({ length: TURNS }, (_, index) => ({
          tool_calls: [
            { id: upstreamToolId(index), name: 'get_weather', arguments: { city: `City ${index}` } },
          ],
        })),
        { text: 'All done.' },
        { text: 'worth the wait', delay_ms: SILENCE_MS },
        { text: 'too late', delay_ms: SILENCE_MS },
        { text: KILLED_TEXT, chunk_delay_ms: 150 },
      ],
    },
  });
  const ports = await Promise.all([freePort(), freePort(), freePort()]);
  replicas = await Promise.all(ports.map((port) => startReplica(port)));
  const lbPort = await freePort();
  lbUrl = `http://127.0.0.1:${lbPort}`;
  haproxy = children.spawn('haproxy', ['-db', '-f', HAPROXY_CONFIG], {
    env: {
      PATH: process.env['PATH'],
      TPX_LB_BIND: `127.0.0.1:${lbPort}`,
      TPX_LB_TIMEOUT: `${LB_TIMEOUT_MS}ms`,
      TPX_LB_CHECK_INTERVAL: `${CHECK_INTERVAL_MS}ms`,
      TPX_SERVE_1: `127.0.0.1:${ports[0]}`,
      TPX_SERVE_2: `127.0.0.1:${ports[1]}`,
      TPX_SERVE_3: `127.0.0.1:${ports[2]}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).child;
  haproxy.stdout?.on('data', (chunk: Buffer) => (haproxyOutput += chunk.toString('utf8')));
  haproxy.stderr?.on('data', (chunk: Buffer) => (haproxyOutput += chunk.toString('utf8')));
  await waitFor(async () => (await fetch(`${lbUrl}/readyz`)).status === 200, 'haproxy listening');
}, READY_TIMEOUT_MS + 30_000);

afterAll(async () => {
  // Every replica ever started (also one whose start failed or timed out, and the ones replaced by a
  // restart) and the balancer: not only those still in `replicas`.
  await children.stopAll();
  await mock?.close();
});

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

describe('behind HAProxy', () => {
  it('completes a 20-turn tool conversation spread over the replicas, with every tool id paired', async () => {
    const turns = TURNS;
    const before = await Promise.all(replicas.map(scrape));
    const requestsBefore = mock.requests.length;
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Check the weather, city by city.' },
    ];
    for (let turn = 0; turn < turns; turn++) {
      const answer = await client().messages.create({
        model: 'claude-test',
        max_tokens: 256,
        tools: [WEATHER_TOOL],
        messages,
      });
      const toolUse = answer.content.find((block) => block.type === 'tool_use');
      expect(toolUse?.type).toBe('tool_use');
      if (toolUse?.type !== 'tool_use') return;
      expect(toolUse.id).toMatch(/^[A-Za-z0-9_-]+$/);
      messages.push({ role: 'assistant', content: answer.content });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: `sunny in City ${turn}` }],
      });
    }
    // The last tool result is answered in text.
    const closing = await client().messages.create({
      model: 'claude-test',
      max_tokens: 256,
      tools: [WEATHER_TOOL],
      messages,
    });
    expect(closing.content.length).toBeGreaterThan(0);

    // Every tool_result reached the upstream under exactly the id the upstream emitted.
    const sent = mock.requests.slice(requestsBefore);
    expect(sent).toHaveLength(turns + 1);
    const last = sent.at(-1)!.body as { messages: { role: string; tool_call_id?: string }[] };
    const toolCallIds = last.messages.filter((message) => message.role === 'tool').map((m) => m.tool_call_id);
    expect(toolCallIds).toEqual(Array.from({ length: turns }, (_, index) => upstreamToolId(index)));

    // Round robin spread the turns over all three replicas.
    const after = await Promise.all(replicas.map(scrape));
    const served = after.map(
      (text, index) =>
        sum(text, 'tpx_requests_total', (line) => line.includes('route="/v1/messages"')) -
        sum(before[index]!, 'tpx_requests_total', (line) => line.includes('route="/v1/messages"')),
    );
    expect(served.reduce((a, b) => a + b, 0)).toBe(turns + 1);
    for (const count of served) expect(count).toBeGreaterThanOrEqual(5);
  });

  it('keeps a stream alive with pings through an upstream silence longer than the idle timeout', async () => {
    const silenceMs = SILENCE_MS;
    const startedMs = Date.now();
    const message = await client()
      .messages.stream({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Think hard.' }],
      })
      .finalMessage();
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(silenceMs);
    expect(message.content).toEqual([{ type: 'text', text: 'worth the wait' }]);

    // The control: a JSON answer cannot ping, and the balancer cuts it at its idle timeout.
    const response = await fetch(`${lbUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Again.' }],
      }),
    });
    expect(response.status).toBe(504);
    await response.arrayBuffer();
  });

  it(
    'gives a client whose replica is killed mid-stream a clean failure, and serves the next requests elsewhere',
    async () => {
      const stream = client().messages.stream({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Stream slowly.' }],
      });
      const texts: string[] = [];
      stream.on('text', (text) => texts.push(text));
      const outcome = stream.finalMessage().then(
        () => 'completed',
        (error: unknown) => error,
      );
      // The replica with the open stream is the one to kill.
      let victim: Replica | undefined;
      await waitFor(async () => {
        const open = await Promise.all(
          replicas.map(async (replica) => sum(await scrape(replica), 'tpx_open_streams')),
        );
        victim = replicas[open.findIndex((count) => count > 0)];
        return victim !== undefined && texts.length > 0;
      }, 'a stream in progress');
      victim!.child.kill('SIGKILL');
      const result = await outcome;
      expect(result).toBeInstanceOf(Error);
      expect(texts.join('')).not.toBe(KILLED_TEXT);
      await victim!.exited;

      for (let index = 0; index < 6; index++) {
        const message = await client().messages.create({
          model: 'claude-test',
          max_tokens: 32,
          messages: [{ role: 'user', content: `after the crash ${index}` }],
        });
        expect(message.type).toBe('message');
      }
      // Back to three replicas for what follows.
      const restarted = await startReplica(victim!.port);
      replicas = replicas.map((replica) => (replica === victim ? restarted : replica));
    },
    READY_TIMEOUT_MS + 30_000,
  );

  it(
    'loses no exchange while every replica is restarted in turn under steady load',
    async () => {
      const failures: unknown[] = [];
      let completed = 0;
      let running = true;
      const worker = async (id: number) => {
        for (let index = 0; running && index < 2_000; index++) {
          try {
            if (index % 3 === 0) {
              await client()
                .messages.stream({
                  model: 'claude-test',
                  max_tokens: 32,
                  messages: [{ role: 'user', content: `s${id}-${index}` }],
                })
                .finalMessage();
            } else {
              await client().messages.create({
                model: 'claude-test',
                max_tokens: 32,
                messages: [{ role: 'user', content: `j${id}-${index}` }],
              });
            }
            completed += 1;
          } catch (error) {
            failures.push(error);
          }
          // Steady, not flat out: the replicas being restarted need the CPU to start.
          await sleep(25);
        }
      };
      const load = Promise.all([worker(1), worker(2)]);
      try {
        for (let index = 0; index < replicas.length; index++) {
          const replica = replicas[index]!;
          replica.child.kill('SIGTERM');
          expect(await replica.exited).toBe(0);
          replicas[index] = await startReplica(replica.port);
          // Let the balancer see it healthy again before the next one goes.
          await sleep(CHECK_INTERVAL_MS * 3);
        }
      } finally {
        running = false;
        await load;
      }
      expect(failures).toEqual([]);
      expect(completed).toBeGreaterThan(20);
    },
    3 * READY_TIMEOUT_MS + 30_000,
  );
});

afterAll(() => {
  // Shown only when something above failed and the balancer had something to say.
  if (haproxyOutput.includes('ALERT')) console.error(haproxyOutput);
});
