/**
 * `anthropic-beta` through `tpx serve`, as a process, against a scripted upstream on loopback that
 * records the headers it got: on the native path the header passes unchanged except the betas named in
 * `--drop-beta` / `TPX_DROP_BETAS`; on the translated path a beta whose feature only Anthropic's servers
 * run is refused by name before anything is sent, and the others go nowhere upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer, step, textMessage, type ScriptedServer } from '../helpers/scripted-server.js';
import { startTpxServe, type TpxServe } from './cli-process.js';

const BETAS = 'interleaved-thinking-2025-05-14, files-api-2025-04-14,unknown-beta-2099-01-01';
const REQUEST = JSON.stringify({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });

let upstream: ScriptedServer;

beforeAll(async () => {
  upstream = await startScriptedServer((record) => {
    if (record.method === 'GET') return step.json({ object: 'list', data: [{ id: 'm', object: 'model' }] });
    if (record.url.includes('/chat/completions')) {
      return step.json({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      });
    }
    return step.json(textMessage());
  });
});
afterAll(async () => {
  await upstream.close();
});

/** Posts the request with `beta` to the proxy; the status, the body, and the upstream's new POSTs. */
async function postWithBeta(serve: TpxServe, beta: string) {
  const before = upstream.requests.length;
  const response = await fetch(`${serve.url}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': beta,
    },
    body: REQUEST,
  });
  const body = (await response.json()) as Record<string, unknown>;
  const posts = upstream.requests.slice(before).filter((record) => record.method === 'POST');
  return { status: response.status, body, posts };
}

describe('anthropic-beta on the native path', () => {
  const native = { ANTHROPIC_API_KEY: 'sk-ant-beta-test', ANTHROPIC_BASE_URL: '' };

  it('passes the header unchanged when no beta is to be dropped', async () => {
    const serve = await startTpxServe([], { ...native, ANTHROPIC_BASE_URL: upstream.url });
    try {
      const { status, posts } = await postWithBeta(serve, BETAS);
      expect(status).toBe(200);
      expect(posts.map((record) => record.headers['anthropic-beta'])).toEqual([BETAS]);
    } finally {
      await serve.stop();
    }
  });

  it('leaves out the betas named by --drop-beta, and only those', async () => {
    const serve = await startTpxServe(['--drop-beta', 'files-api-2025-04-14,context-1m-2025-08-07'], {
      ...native,
      ANTHROPIC_BASE_URL: upstream.url,
    });
    try {
      const { status, posts } = await postWithBeta(serve, BETAS);
      expect(status).toBe(200);
      expect(posts.map((record) => record.headers['anthropic-beta'])).toEqual([
        'interleaved-thinking-2025-05-14,unknown-beta-2099-01-01',
      ]);
      // Every beta dropped: no header at all, rather than an empty one.
      const alone = await postWithBeta(serve, 'files-api-2025-04-14');
      expect(alone.status).toBe(200);
      expect(alone.posts[0]!.headers['anthropic-beta']).toBeUndefined();
    } finally {
      await serve.stop();
    }
  });

  it('takes the same list from TPX_DROP_BETAS', async () => {
    const serve = await startTpxServe([], {
      ...native,
      ANTHROPIC_BASE_URL: upstream.url,
      TPX_DROP_BETAS: 'unknown-beta-2099-01-01, interleaved-thinking-2025-05-14',
    });
    try {
      const { posts } = await postWithBeta(serve, BETAS);
      expect(posts.map((record) => record.headers['anthropic-beta'])).toEqual(['files-api-2025-04-14']);
    } finally {
      await serve.stop();
    }
  });
});

describe('anthropic-beta on the translated path', () => {
  let serve: TpxServe;

  beforeAll(async () => {
    serve = await startTpxServe(['--base-url', `${upstream.url}/v1`, '--token', 'local'], {});
  });
  afterAll(async () => {
    await serve.stop();
  });

  it('refuses a beta only Anthropic runs by name with a 400, sending nothing upstream', async () => {
    const { status, body, posts } = await postWithBeta(serve, BETAS);
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(JSON.stringify(body)).toContain('anthropic-beta: files-api-2025-04-14 cannot be honoured');
    expect(posts).toEqual([]);
  });

  it('serves mapped, ignored and unknown betas, and never sends the header upstream', async () => {
    const { status, posts } = await postWithBeta(
      serve,
      'interleaved-thinking-2025-05-14,claude-code-20250219,oauth-2025-04-20,unknown-beta-2099-01-01',
    );
    expect(status).toBe(200);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.headers['anthropic-beta']).toBeUndefined();
  });
});
