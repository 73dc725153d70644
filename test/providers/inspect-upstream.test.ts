import { afterEach, describe, expect, it } from 'vitest';
import { httpRequest } from '../../src/providers/http-exchange.js';
import { inspectOpenAiUpstream, propsUrlFor } from '../../src/providers/inspect-upstream.js';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';
import { rejectionOf, testAttempt, type TestAttempt } from './attempt-context.js';

let server: ScriptedServer | undefined;
let attempt: TestAttempt | undefined;
afterEach(async () => {
  await attempt?.close();
  await server?.close();
  attempt = undefined;
  server = undefined;
});

/**
 * Inspects a scripted upstream. `cancelAfter` names a path whose answer's headers, once received, are
 * followed by the caller's cancel (while its body is being read).
 */
async function inspect(
  steps: Parameters<typeof startScriptedServer>[0],
  withProps = true,
  cancelAfter?: string,
) {
  server = await startScriptedServer(steps);
  attempt = testAttempt('tpx');
  const { context } = attempt;
  const get = async (url: string) => {
    const response = await httpRequest(url, { method: 'GET', headers: {} }, context);
    if (cancelAfter !== undefined && url.endsWith(cancelAfter)) {
      setTimeout(() => context.cancellation.abort('caller left'), 20);
    }
    return response;
  };
  return inspectOpenAiUpstream(get, context, {
    modelsUrl: `${server.url}/v1/models`,
    propsUrl: withProps ? `${server.url}/props` : undefined,
  });
}

describe('inspectOpenAiUpstream', () => {
  it('lists the models and takes the context window from /props', async () => {
    const report = await inspect([
      step.json({ data: [{ id: 'a', context_length: 4096 }, { id: 'b' }] }),
      step.json({ default_generation_settings: { n_ctx: 8192 } }),
    ]);
    expect(report).toStrictEqual({
      modelsUrl: `${server!.url}/v1/models`,
      modelsStatus: 200,
      modelsContentType: 'application/json',
      models: [{ id: 'a', contextWindow: 4096 }, { id: 'b' }],
      contextWindow: { tokens: 8192, source: `${server!.url}/props` },
    });
    expect(server!.requests.map((request) => request.url)).toStrictEqual(['/v1/models', '/props']);
  });

  it('states no window when /props answers an error, or is not asked for', async () => {
    const failed = await inspect([step.json({ data: [] }), step.json({ n_ctx: 8192 }, { status: 404 })]);
    expect(failed.contextWindow).toBeUndefined();
    expect(failed.models).toStrictEqual([]);
    await server!.close();
    const unasked = await inspect([step.json({ data: [{ id: 'a' }] })], false);
    expect(unasked.contextWindow).toBeUndefined();
    expect(server!.requests).toHaveLength(1);
  });

  it('does not ask /props when there is no model list', async () => {
    const report = await inspect([step.json({ error: 'no' }), step.json({ n_ctx: 1 })]);
    expect(report.problem).toBe(
      'answered JSON that is not a model list (no "data" array): "{\\"error\\":\\"no\\"}"',
    );
    expect(server!.requests).toHaveLength(1);
  });

  it('ignores a /props that cannot be reached or read', async () => {
    const report = await inspect([step.json({ data: [{ id: 'a' }] }), step.reset('before-headers')]);
    expect(report.models).toStrictEqual([{ id: 'a' }]);
    expect(report.contextWindow).toBeUndefined();
  });

  it('describes an error status, with an HTML page said so', async () => {
    const html = await inspect([step.text(502, '<html>bad gateway</html>')]);
    expect(html).toMatchObject({ modelsStatus: 502, problem: 'answered 502 with an HTML page' });
    expect(html.models).toBeUndefined();
    await server!.close();
    const plain = await inspect([step.json({}, { status: 404 })]);
    expect(plain.problem).toBe('answered 404');
  });

  it('describes a 200 that is an HTML page, text that is not JSON, or no content type at all', async () => {
    const byType = await inspect([step.text(200, 'welcome')]);
    expect(byType.problem).toBe(
      'answered with an HTML page (text/html; charset=utf-8), not a JSON model list',
    );
    await server!.close();
    const byStart = await inspect([
      step.text(200, '  <!DOCTYPE html><p>hi', { 'content-type': 'text/plain' }),
    ]);
    expect(byStart.problem).toBe('answered with an HTML page (text/plain), not a JSON model list');
    await server!.close();
    const byTag = await inspect([step.text(200, '<HTML>', {})]);
    expect(byTag.problem).toBe('answered with an HTML page (no content type), not a JSON model list');
    await server!.close();
    const notJson = await inspect([step.text(200, 'x'.repeat(100), { 'content-type': 'text/plain' })]);
    expect(notJson.problem).toBe(`answered text/plain that is not JSON: "${'x'.repeat(80)}"`);
    await server!.close();
    const untyped = await inspect([step.text(200, 'nope', {})]);
    expect(untyped.modelsContentType).toBe('');
    expect(untyped.problem).toBe('answered no content type that is not JSON: "nope"');
  });

  it('fails when the model list cannot be fetched at all', async () => {
    const error = await rejectionOf(inspect([step.reset('before-headers')]));
    expect(error).toMatchObject({ code: 'MODEL_ETRANSPORT' });
  });
  it('quotes only the first 80 characters of JSON that is not a model list', async () => {
    const body = { error: 'e'.repeat(200) };
    const report = await inspect([step.json(body)]);
    expect(report.problem).toBe(
      `answered JSON that is not a model list (no "data" array): ${JSON.stringify(JSON.stringify(body).slice(0, 80))}`,
    );
  });

  it('takes an error status for a problem even when its body is a model list', async () => {
    const report = await inspect([
      step.json({ data: [{ id: 'a' }] }, { status: 404 }),
      step.json({ n_ctx: 1 }),
    ]);
    expect(report).toMatchObject({ modelsStatus: 404, problem: 'answered 404' });
    expect(report.models).toBeUndefined();
    expect(server!.requests).toHaveLength(1);
  });

  it('reads the model list of any 2xx status, 299 included', async () => {
    const report = await inspect([step.json({ data: [{ id: 'a' }] }, { status: 299 })], false);
    expect(report.problem).toBeUndefined();
    expect(report.models).toStrictEqual([{ id: 'a' }]);
  });

  it('reports a model list cut off mid-body as a body that is not JSON', async () => {
    const report = await inspect([step.reset('mid-body', { body: '{"data": [{"id": "a"' })], false);
    expect(report.models).toBeUndefined();
    expect(report.problem).toBe('answered application/json that is not JSON: ""');
  });

  it('fails when the caller cancels while the model list is being read', async () => {
    const error = await rejectionOf(inspect([step.hangAfterHeaders()], false, '/v1/models'));
    expect(error).toMatchObject({ code: 'MODEL_EABORTED' });
  });

  it('fails when the caller cancels while /props is being read', async () => {
    const error = await rejectionOf(
      inspect([step.json({ data: [{ id: 'a' }] }), step.hangAfterHeaders()], true, '/props'),
    );
    expect(error).toMatchObject({ code: 'MODEL_EABORTED' });
  });
});

describe('propsUrlFor', () => {
  it('puts /props at the server root beside /v1', () => {
    expect(propsUrlFor('http://host:8080/v1')).toBe('http://host:8080/props');
    expect(propsUrlFor('http://host:8080/v1/')).toBe('http://host:8080/props');
    expect(propsUrlFor('http://host:8080/llama/v1//')).toBe('http://host:8080/llama/props');
    expect(propsUrlFor('http://host:8080')).toBe('http://host:8080/props');
    expect(propsUrlFor('http://host:8080/v10')).toBe('http://host:8080/v10/props');
  });
});
