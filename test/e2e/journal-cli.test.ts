/**
 * `tpx journal DIR`: lists a journal's exchanges (time, status, upstream, model, tokens, ms, id), filters
 * them by status, model and time, prints one with `--show ID`, reports a damaged line with its file and
 * line number and skips it, and reads a 10,000-exchange journal whole.
 */
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { runTpx, startTpxServe } from './cli-process.js';
import { UPSTREAM_TOKEN } from './serve-support.js';

interface Line {
  id: string;
  time: string;
  status: number;
  model: string;
  upstreamModel?: string;
  usage?: { input_tokens: number; output_tokens: number };
  errorCode?: string;
}

function journalLine(line: Line): string {
  return `${JSON.stringify({
    upstream: 'default',
    provider: 'tpx',
    durationMs: 12.5,
    stream: false,
    request: { model: line.model, max_tokens: 16, messages: [{ role: 'user', content: `hi ${line.id}` }] },
    ...line,
  })}\n`;
}

/** Data rows of a listing (the header left out). */
function rowsOf(stdout: string): string[][] {
  return stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((row) => row.trim().split(/\s{2,}/));
}

describe('tpx journal', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tpx-journal-cli-'));
    writeFileSync(
      join(dir, 'tpx-20260501T090000000Z-100-1.jsonl'),
      journalLine({
        id: 'req_a',
        time: '2026-05-01T09:00:00.000Z',
        status: 200,
        model: 'claude-sonnet-4-5',
        upstreamModel: 'qwen3-32b',
        usage: { input_tokens: 120, output_tokens: 31 },
      }) +
        journalLine({
          id: 'req_b',
          time: '2026-05-01T09:05:00.000Z',
          status: 503,
          model: 'claude-haiku-4-5',
          errorCode: 'MODEL_EHTTP',
        }) +
        '{"id":"req_cut","time":"2026-05-01T09:06:00.000Z","sta\n' +
        journalLine({
          id: 'req_c',
          time: '2026-05-01T09:10:00.000Z',
          status: 400,
          model: 'claude-sonnet-4-5',
          errorCode: 'MODEL_EINVAL',
        }),
    );
    writeFileSync(
      join(dir, 'tpx-20260501T100000000Z-100-2.jsonl'),
      journalLine({
        id: 'req_d',
        time: '2026-05-01T10:00:00.000Z',
        status: 200,
        model: 'claude-haiku-4-5',
        usage: { input_tokens: 7, output_tokens: 3 },
        errorCode: 'MODEL_ETIMEOUT',
      }) + '[1, 2]\n',
    );
  });

  it('lists every exchange oldest first with time, status, upstream, model, tokens, ms and id', async () => {
    const result = await runTpx(['journal', dir]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(/^time\s+status\s+upstream\s+model\s+tokens\s+ms\s+id$/);
    expect(rowsOf(result.stdout)).toEqual([
      ['2026-05-01 09:00:00.000', '200', 'default', 'claude-sonnet-4-5→qwen3-32b', '120→31', '13', 'req_a'],
      ['2026-05-01 09:05:00.000', '503', 'default', 'claude-haiku-4-5', '-', '13', 'req_b'],
      ['2026-05-01 09:10:00.000', '400', 'default', 'claude-sonnet-4-5', '-', '13', 'req_c'],
      ['2026-05-01 10:00:00.000', '200!MODEL_ETIMEOUT', 'default', 'claude-haiku-4-5', '7→3', '13', 'req_d'],
    ]);
  });

  it('reports each damaged line with its file and line number and skips it', async () => {
    const result = await runTpx(['journal', dir]);
    expect(result.stderr).toMatch(/tpx-20260501T090000000Z-100-1\.jsonl:3: damaged line skipped \(not JSON/);
    expect(result.stderr).toMatch(
      /tpx-20260501T100000000Z-100-2\.jsonl:2: damaged line skipped \(not a JSON object\)/,
    );
    expect(result.stderr).toContain('4 exchanges, 2 damaged lines skipped');
  });

  it('filters by status, model glob and time', async () => {
    const ids = async (...flags: string[]) => {
      const result = await runTpx(['journal', dir, ...flags]);
      expect(result.code, result.stderr).toBe(0);
      return rowsOf(result.stdout).map((row) => row.at(-1));
    };
    expect(await ids('--status', '5xx')).toEqual(['req_b']);
    expect(await ids('--status', '200')).toEqual(['req_a', 'req_d']);
    expect(await ids('--status', 'error')).toEqual(['req_b', 'req_c', 'req_d']);
    expect(await ids('--model', '*haiku*')).toEqual(['req_b', 'req_d']);
    expect(await ids('--model', 'qwen3-*')).toEqual(['req_a']);
    expect(await ids('--since', '2026-05-01T09:05:00Z', '--until', '2026-05-01T09:30:00Z')).toEqual([
      'req_b',
      'req_c',
    ]);
    expect(await ids('--since', '1h')).toEqual([]);
  });

  it('shows one exchange whole with --show, and says so when there is none', async () => {
    const shown = await runTpx(['journal', dir, '--show', 'req_c']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      id: 'req_c',
      status: 400,
      request: { model: 'claude-sonnet-4-5' },
    });
    const missing = await runTpx(['journal', dir, '--show', 'req_nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no exchange req_nope');
  });

  it('refuses a bad filter and a missing journal with a usage error', async () => {
    const badStatus = await runTpx(['journal', dir, '--status', 'teapot']);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toContain('--status must be');
    const missing = await runTpx(['journal', join(dir, 'nowhere')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENOENT');
  });

  it('lists a journal of 10,000 exchanges whole and correctly', async () => {
    const big = mkdtempSync(join(tmpdir(), 'tpx-journal-10k-'));
    const file = join(big, 'tpx-20260501T000000000Z-1-1.jsonl');
    const start = Date.parse('2026-05-01T00:00:00.000Z');
    let text = '';
    for (let index = 0; index < 10_000; index++) {
      text += journalLine({
        id: `req_${String(index).padStart(5, '0')}`,
        time: new Date(start + index * 1_000).toISOString(),
        status: index % 100 === 99 ? 529 : 200,
        model: index % 2 === 0 ? 'claude-sonnet-4-5' : 'claude-haiku-4-5',
        usage: { input_tokens: index, output_tokens: 10 },
      });
      if (text.length > 1_000_000) {
        appendFileSync(file, text);
        text = '';
      }
    }
    appendFileSync(file, text);
    const began = performance.now();
    const all = await runTpx(['journal', big], {}, { timeoutMs: 60_000 });
    const elapsedMs = performance.now() - began;
    expect(all.code, all.stderr).toBe(0);
    const rows = rowsOf(all.stdout);
    expect(rows).toHaveLength(10_000);
    expect(rows[0]).toEqual([
      '2026-05-01 00:00:00.000',
      '200',
      'default',
      'claude-sonnet-4-5',
      '0→10',
      '13',
      'req_00000',
    ]);
    expect(rows[9_999]!.at(-1)).toBe('req_09999');
    expect(all.stderr).toContain('10000 exchanges');
    const overloaded = await runTpx(['journal', big, '--status', '5xx'], {}, { timeoutMs: 60_000 });
    expect(rowsOf(overloaded.stdout).map((row) => row.at(-1))).toEqual(
      Array.from({ length: 100 }, (_, index) => `req_${String(index * 100 + 99).padStart(5, '0')}`),
    );
    process.stderr.write(`tpx journal listed 10,000 exchanges in ${Math.round(elapsedMs)} ms\n`);
  });
});

describe('tpx journal on what tpx serve --journal wrote', () => {
  let mock: MockModelServer;
  beforeAll(async () => {
    mock = await startMockModel({ token: UPSTREAM_TOKEN });
  });
  afterAll(async () => {
    await mock.close();
  });

  it('lists the exchanges served and shows one by the request-id its caller got', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tpx-journal-served-'));
    const serve = await startTpxServe(['--journal', dir], {
      TPX_OAUTH_TOKEN: UPSTREAM_TOKEN,
      TPX_BASE_URL: mock.url,
    });
    let requestId: string | null;
    try {
      const response = await fetch(`${serve.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-listed',
          max_tokens: 16,
          messages: [{ role: 'user', content: 'Hello' }],
        }),
      });
      expect(response.status).toBe(200);
      requestId = response.headers.get('request-id');
      await response.text();
    } finally {
      await serve.stop();
    }
    const listed = await runTpx(['journal', dir]);
    const [row] = rowsOf(listed.stdout);
    expect(row).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/),
      '200',
      'default',
      expect.stringMatching(/^claude-listed/),
      expect.stringMatching(/^\d+→\d+$/),
      expect.stringMatching(/^\d+$/),
      requestId,
    ]);
    const shown = await runTpx(['journal', dir, '--show', requestId!]);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      id: requestId,
      request: { messages: [{ role: 'user', content: 'Hello' }] },
      response: { type: 'message', role: 'assistant' },
    });
  });
});
