import { describe, expect, it } from 'vitest';
import { fallbackModelList, mapModelList } from './map-model-list.js';

describe('mapModelList', () => {
  it('maps an OpenAI-compatible list to the Messages list shape', () => {
    const list = mapModelList({
      object: 'list',
      data: [
        { id: 'qwen3', object: 'model', created: 1_700_000_000, owned_by: 'me' },
        { id: 'llama', object: 'model' },
      ],
    });
    expect(list).toEqual({
      data: [
        { type: 'model', id: 'qwen3', display_name: 'qwen3', created_at: '2023-11-14T22:13:20.000Z' },
        { type: 'model', id: 'llama', display_name: 'llama', created_at: '1970-01-01T00:00:00.000Z' },
      ],
      has_more: false,
      first_id: 'qwen3',
      last_id: 'llama',
    });
  });

  it('returns undefined for a payload without usable entries', () => {
    expect(mapModelList({ data: [{ name: 'no id' }] })).toBeUndefined();
    expect(mapModelList('<html>')).toBeUndefined();
    expect(mapModelList(null)).toBeUndefined();
  });
});

describe('fallbackModelList', () => {
  it('lists the configured model, or nothing', () => {
    expect(fallbackModelList('tpx-model').data.map((model) => model.id)).toEqual(['tpx-model']);
    expect(fallbackModelList(undefined)).toEqual({
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
  });
});

describe('mapModelList: entries real servers send', () => {
  it('skips null entries and entries with an empty or non-string id', () => {
    expect(mapModelList({ data: [null, { id: '' }, { id: 7 }, { id: 'qwen3' }] })).toStrictEqual({
      data: [{ type: 'model', id: 'qwen3', display_name: 'qwen3', created_at: '1970-01-01T00:00:00.000Z' }],
      has_more: false,
      first_id: 'qwen3',
      last_id: 'qwen3',
    });
  });

  it('dates an entry whose created is not a number of seconds at the epoch', () => {
    const dates = mapModelList({
      data: [
        { id: 'a', created: '1700000000' },
        { id: 'b', created: Number.POSITIVE_INFINITY },
        { id: 'c', created: 1e20 },
        { id: 'd', created: 0 },
      ],
    })?.data.map((model) => model.created_at);
    expect(dates).toStrictEqual([
      '1970-01-01T00:00:00.000Z',
      '1970-01-01T00:00:00.000Z',
      '1970-01-01T00:00:00.000Z',
      '1970-01-01T00:00:00.000Z',
    ]);
  });

  it('returns undefined for a list without data or with data that is not a list', () => {
    expect(mapModelList({ data: [] })).toBeUndefined();
    expect(mapModelList({ data: { id: 'a' } })).toBeUndefined();
    expect(mapModelList({})).toBeUndefined();
  });
});

describe('fallbackModelList: the entry', () => {
  it('gives the configured model as a whole Messages model entry', () => {
    expect(fallbackModelList('tpx-model')).toStrictEqual({
      data: [
        { type: 'model', id: 'tpx-model', display_name: 'tpx-model', created_at: '1970-01-01T00:00:00.000Z' },
      ],
      has_more: false,
      first_id: 'tpx-model',
      last_id: 'tpx-model',
    });
  });
});
