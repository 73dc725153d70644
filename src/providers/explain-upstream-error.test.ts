import { describe, expect, it } from 'vitest';
import { TransportError, type TransportErrorOptions } from '../errors.js';
import { explainUpstreamError, type FailedCall } from './explain-upstream-error.js';

function notFound(message: string, extra: TransportErrorOptions = {}, withProvider = true) {
  return new TransportError('MODEL_EHTTP', message, {
    status: 404,
    type: 'not_found_error',
    ...(withProvider ? { provider: 'tpx' as const } : {}),
    headers: { 'request-id': 'req_1' },
    ...extra,
  });
}

const chatCall: FailedCall = {
  method: 'POST',
  url: 'http://127.0.0.1:8080/chat/completions',
  model: 'served-model',
  baseUrlVariable: 'TPX_BASE_URL',
};

describe('explainUpstreamError', () => {
  it('hands back an error that is not a 404 as it is', () => {
    const error = new TransportError('MODEL_EHTTP', 'model gone', { status: 400, provider: 'tpx' });
    expect(explainUpstreamError(error, chatCall)).toBe(error);
  });

  it('says the model is not served when the 404 names the model, keeping every detail of the error', () => {
    const original = notFound('The model `served-model` does not exist', {
      requestId: 'req_1',
      retryAfterMs: 1500,
      retryable: true,
    });
    const explained = explainUpstreamError(original, chatCall);
    expect(explained.message).toBe(
      'the upstream does not serve the model "served-model" (The model `served-model` does not exist). ' +
        "Map requested names to a served model with TPX_MODEL_MAP (--model-map, e.g. '*=served-model'), or set TPX_MODEL; " +
        '`tpx doctor` lists what the upstream serves',
    );
    expect(explained).toMatchObject({
      code: 'MODEL_EHTTP',
      status: 404,
      retryable: true,
      provider: 'tpx',
      requestId: 'req_1',
      retryAfterMs: 1500,
      headers: { 'request-id': 'req_1' },
      cause: original,
    });
    expect(explained.body.error.type).toBe('not_found_error');
    expect(explained.headers).not.toBe(original.headers);
  });

  it('recognises a model 404 by the word "model" even when the call named none', () => {
    const { model: _model, ...withoutModel } = chatCall;
    const explained = explainUpstreamError(notFound('Model not found'), withoutModel);
    expect(explained.message).toMatch(/^the upstream does not serve the model sent \(Model not found\)\. /);
  });

  it('recognises a model 404 by the model name alone, and not by words that only contain "model"', () => {
    const byName = explainUpstreamError(notFound('no such thing: served-model'), chatCall);
    expect(byName.message).toMatch(/^the upstream does not serve the model "served-model"/);
    const route = explainUpstreamError(notFound('remodeling in progress'), { ...chatCall, model: '' });
    expect(route.message).toMatch(/^the upstream has no endpoint at /);
  });

  it('recognises a model 404 by a model name that has no word "model" in it', () => {
    const explained = explainUpstreamError(notFound('llama-3.1-8b not found'), {
      ...chatCall,
      model: 'llama-3.1-8b',
    });
    expect(explained.message).toBe(
      'the upstream does not serve the model "llama-3.1-8b" (llama-3.1-8b not found). ' +
        "Map requested names to a served model with TPX_MODEL_MAP (--model-map, e.g. '*=served-model'), or set TPX_MODEL; " +
        '`tpx doctor` lists what the upstream serves',
    );
  });

  it('reads a route 404 as a route 404 when the call named no model, whatever its text says', () => {
    const explained = explainUpstreamError(notFound('handler undefined for this path'), {
      method: 'GET',
      url: 'http://h/api/other',
      baseUrlVariable: 'TPX_BASE_URL',
    });
    expect(explained.message).toBe(
      'the upstream has no endpoint at GET http://h/api/other (404: handler undefined for this path); ' +
        'TPX_BASE_URL is usually the API root ending in /v1: try http://h/api/other/v1',
    );
  });

  it('strips a known route only at the end of the URL, and sees /v1 only at the end of the base', () => {
    const middle = explainUpstreamError(notFound('Not Found'), {
      method: 'POST',
      url: 'http://h/v1/models-proxy/chat/completions',
      baseUrlVariable: 'TPX_BASE_URL',
    });
    expect(middle.message).toBe(
      'the upstream has no endpoint at POST http://h/v1/models-proxy/chat/completions (404: Not Found); ' +
        'TPX_BASE_URL is usually the API root ending in /v1: try http://h/v1/models-proxy/v1',
    );
  });

  it('suggests adding /v1 when a route 404 comes from a base URL without it', () => {
    const explained = explainUpstreamError(notFound('Not Found', {}, false), {
      method: 'POST',
      url: 'http://127.0.0.1:8080/chat/completions',
      model: 'm',
      baseUrlVariable: 'TPX_BASE_URL',
    });
    expect(explained.message).toBe(
      'the upstream has no endpoint at POST http://127.0.0.1:8080/chat/completions (404: Not Found); ' +
        'TPX_BASE_URL is usually the API root ending in /v1: try http://127.0.0.1:8080/v1',
    );
    expect(explained.provider).toBeUndefined();
    expect(explained.requestId).toBeUndefined();
    expect(explained.retryAfterMs).toBeUndefined();
  });

  it('asks to check the base URL and port when it already ends in /v1, with the query left out of the root', () => {
    const explained = explainUpstreamError(notFound('Not Found'), {
      method: 'GET',
      url: 'http://127.0.0.1:9/v1/v1/models?beta=true',
      baseUrlVariable: 'ANTHROPIC_BASE_URL',
    });
    expect(explained.message).toBe(
      'the upstream has no endpoint at GET http://127.0.0.1:9/v1/v1/models?beta=true (404: Not Found); ' +
        'check ANTHROPIC_BASE_URL (now http://127.0.0.1:9/v1) and the port',
    );
  });

  it('strips each known route from the URL to find the base', () => {
    for (const [url, root] of [
      ['http://h/api/v1/messages', 'http://h/api'],
      ['http://h/api/models', 'http://h/api'],
      ['http://h/api/chat/completions?x=1', 'http://h/api'],
      ['http://h/api/other', 'http://h/api/other'],
    ] as const) {
      const explained = explainUpstreamError(notFound('Not Found'), {
        method: 'POST',
        url,
        baseUrlVariable: 'TPX_BASE_URL',
      });
      expect(explained.message).toContain(`try ${root}/v1`);
    }
  });
  it('on the native path, where the routes carry their own /v1, asks to drop a /v1 the base URL ends in', () => {
    const native = { method: 'POST', baseUrlVariable: 'ANTHROPIC_BASE_URL', routesAddV1: true } as const;
    const doubled = explainUpstreamError(notFound('Not Found'), {
      ...native,
      url: 'http://127.0.0.1:9/v1/v1/messages?beta=true',
    });
    expect(doubled.message).toBe(
      'the upstream has no endpoint at POST http://127.0.0.1:9/v1/v1/messages?beta=true (404: Not Found); ' +
        'ANTHROPIC_BASE_URL is the API root without /v1: try http://127.0.0.1:9',
    );
    const plain = explainUpstreamError(notFound('Not Found'), {
      ...native,
      url: 'http://127.0.0.1:9/v1/messages',
    });
    expect(plain.message).toBe(
      'the upstream has no endpoint at POST http://127.0.0.1:9/v1/messages (404: Not Found); ' +
        'check ANTHROPIC_BASE_URL (now http://127.0.0.1:9) and the port',
    );
  });

  it('strips the Responses route to find the base', () => {
    const explained = explainUpstreamError(notFound('Not Found'), {
      method: 'POST',
      url: 'http://h/api/responses',
      baseUrlVariable: 'TPX_BASE_URL',
    });
    expect(explained.message).toBe(
      'the upstream has no endpoint at POST http://h/api/responses (404: Not Found); ' +
        'TPX_BASE_URL is usually the API root ending in /v1: try http://h/api/v1',
    );
  });
});
