/**
 * The pieces of one proxy exchange that stand on their own: the request ids the proxy makes when the
 * upstream gave none, and how a Messages `usage` object from an untrusted upstream becomes the usage the
 * exchange logs and counts.
 */
import { describe, expect, it } from 'vitest';
import { generateRequestId, mergeUsage } from '../../src/server/exchange.js';
import type { UsageRecord } from '../../src/server/logger.js';

describe('generateRequestId', () => {
  it('makes ids in Anthropic’s style, req_ and URL-safe characters, one random stem per process, a new id each time', () => {
    const ids = Array.from({ length: 50 }, () => generateRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{25,}$/);
    expect(new Set(ids.map((id) => id.slice(0, 28))).size).toBe(1);
    expect(new Set(ids).size).toBe(50);
  });
});

describe('mergeUsage', () => {
  it('copies every numeric usage field over what is there, and leaves the others', () => {
    const into: UsageRecord = { input_tokens: 1, output_tokens: 2 };
    mergeUsage(into, {
      input_tokens: 10,
      cache_creation_input_tokens: 3,
      cache_read_input_tokens: 4,
      server_tool_use: { web_search_requests: 1 },
    });
    expect(into).toStrictEqual({
      input_tokens: 10,
      output_tokens: 2,
      cache_creation_input_tokens: 3,
      cache_read_input_tokens: 4,
    });
    mergeUsage(into, { output_tokens: 0 });
    expect(into.output_tokens).toBe(0);
  });

  it('takes nothing that is not a number, and nothing from a usage that is not an object', () => {
    const into: UsageRecord = { input_tokens: 5 };
    mergeUsage(into, {
      input_tokens: '7',
      output_tokens: null,
      cache_creation_input_tokens: true,
      cache_read_input_tokens: [1],
    });
    for (const usage of [null, undefined, 12, 'usage', true]) mergeUsage(into, usage);
    expect(into).toStrictEqual({ input_tokens: 5 });
  });
});
