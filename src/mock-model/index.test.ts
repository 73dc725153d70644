import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as mainEntry from '../index.js';
import * as mockModelEntry from './index.js';

interface PackageManifest {
  exports: Record<string, { types: string; import: string }>;
}

const manifest = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as PackageManifest;

describe('the tpx-transport/mock-model entry', () => {
  it('is the only entry that exports the mock model: the main entry has none of it', () => {
    expect(Object.keys(mockModelEntry).sort()).toStrictEqual([
      'loadReplayJournal',
      'parseMockScript',
      'startMockModel',
    ]);
    expect(Object.keys(mainEntry)).not.toContain('startMockModel');
    expect(Object.keys(mainEntry)).not.toContain('parseMockScript');
  });

  it('is published as the ./mock-model subpath, built from src/mock-model/index.ts', () => {
    expect(manifest.exports['./mock-model']).toStrictEqual({
      types: './dist/mock-model/index.d.ts',
      import: './dist/mock-model/index.js',
    });
  });

  it('starts a scripted server that answers on loopback', async () => {
    const server = await mockModelEntry.startMockModel({
      script: { replies: [{ text: 'From the entry.' }] },
    });
    try {
      const response = await fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tpx-mock-1', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = (await response.json()) as { choices: { message: { content: string } }[] };
      expect(response.status).toBe(200);
      expect(body.choices[0]?.message.content).toBe('From the entry.');
    } finally {
      await server.close();
    }
  });
});
