/**
 * Trace conformance: every behaviour of the seed model at the `.cfg` bounds, and a deterministic sample
 * at the larger bound, replayed against the real transport and session over loopback HTTP, in both
 * modes (`send` and `stream`). See `replay.ts` for what each step does and what is compared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeToolId } from '../../src/index.js';
import { behaviours } from './explore.js';
import { CFG_CONSTANTS, LARGER_CONSTANTS, type Step } from './model.js';
import {
  FAILURE_KINDS,
  formatViolations,
  providerToolId,
  replayBehaviours,
  startReplayServers,
  type ReplayMode,
  type ReplayReport,
  type ReplayServers,
} from './replay.js';

const MODES: readonly ReplayMode[] = ['send', 'stream'];
const SAMPLE_SIZE = 200;

/** Every `stride`-th behaviour, from the first: deterministic, and it reaches every boot. */
function sampleBehaviours(all: readonly (readonly Step[])[], size: number): (readonly Step[])[] {
  const stride = Math.max(1, Math.ceil(all.length / size));
  return all.filter((_, index) => index % stride === 0);
}

function actionCounts(list: readonly (readonly Step[])[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const behaviour of list)
    for (const step of behaviour) counts[step.action] = (counts[step.action] ?? 0) + 1;
  return counts;
}

function expectConformance(report: ReplayReport, list: readonly (readonly Step[])[]): void {
  expect(report.violations, formatViolations(report.violations)).toEqual([]);
  expect(report.behaviours).toBe(list.length);
  expect(report.steps).toBe(list.reduce((sum, behaviour) => sum + behaviour.length, 0));
  expect(report.actions).toEqual(actionCounts(list));
  const counts = actionCounts(list);
  // One real call per CallerSend and per NoProvider; a request reaches a server for each CallerSend only,
  // unless a silent upstream's deadline overtook it before the server read it (a busy machine allows
  // that; not every time).
  expect(report.exchanges).toBe((counts['CallerSend'] ?? 0) + (counts['NoProvider'] ?? 0));
  expect(report.requests + report.unobservedSends).toBe(counts['CallerSend'] ?? 0);
  for (const kind of FAILURE_KINDS) expect(report.failures[kind]).toBeGreaterThan(0);
  expect(report.unobservedSends).toBeLessThan(report.failures.timeout);
  // Only a stream hands out events before failing: a malformed stream starts validly, then breaks.
  if (report.mode === 'send') expect(report.failedAfterEvents).toBe(0);
  else expect(report.failedAfterEvents).toBeGreaterThan(0);
  expect(report.comparisons).toBeGreaterThan(report.steps * 3);
}

describe('trace conformance of the seed model against the real transport', () => {
  let servers: ReplayServers;
  const cfg = [...behaviours(CFG_CONSTANTS)];
  const larger = sampleBehaviours([...behaviours(LARGER_CONSTANTS)], SAMPLE_SIZE);

  beforeAll(async () => {
    servers = await startReplayServers();
  });
  afterAll(async () => {
    await servers.close();
  });

  it('enumerates the behaviours it replays', () => {
    expect(cfg).toHaveLength(466);
    expect(cfg.reduce((sum, behaviour) => sum + behaviour.length, 0)).toBe(4231);
    expect(larger).toHaveLength(200);
    // All four credential combinations are in both sets.
    for (const list of [cfg, larger]) {
      const boots = new Set(list.map((behaviour) => JSON.stringify(behaviour[0]!.param)));
      expect(boots.size).toBe(4);
    }
  });

  it('writes provider ids of every kind the codec meets, distinct within a behaviour', () => {
    const ids = [0, 1, 2, 3].flatMap((turn) => [1, 2, 3].map((n) => providerToolId('tpx', n, turn)));
    expect(new Set(ids).size).toBe(ids.length);
    const encoded = ids.filter((id) => encodeToolId(id, 1, () => 'unused') !== id);
    // Three styles in four need the codec: ':' and '.', ' ' and '/', more than 200 characters.
    expect(encoded).toHaveLength(9);
    expect(ids.some((id) => id.length > 200)).toBe(true);
    expect(ids.filter((id) => /^call_\d+Qx7$/.test(id))).toHaveLength(3);
  });

  for (const mode of MODES) {
    it(
      `replays all ${cfg.length} behaviours at the .cfg bounds with ${mode}`,
      { timeout: 60_000 },
      async () => {
        const report = await replayBehaviours(cfg, { mode, servers });
        expectConformance(report, cfg);
        expect(servers.stray).toEqual([]);
      },
    );
  }

  // The same behaviours with the tpx provider on the Responses wire (`TPX_WIRE=responses`).
  for (const mode of MODES) {
    it(
      `replays all ${cfg.length} behaviours at the .cfg bounds with ${mode} over the Responses wire`,
      { timeout: 60_000 },
      async () => {
        const report = await replayBehaviours(cfg, { mode, servers, wire: 'responses' });
        expectConformance(report, cfg);
        expect(servers.stray).toEqual([]);
      },
    );
  }

  for (const mode of MODES) {
    it(
      `replays a sample of ${SAMPLE_SIZE} behaviours at the larger bound with ${mode}`,
      { timeout: 60_000 },
      async () => {
        const report = await replayBehaviours(larger, { mode, servers });
        expectConformance(report, larger);
        expect(servers.stray).toEqual([]);
      },
    );
  }
});
