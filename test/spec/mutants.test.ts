/**
 * A checker that cannot fail proves nothing: the conformance replay (`replay.ts`) is run against the
 * implementation with one fault injected at a time, and must report each one.
 *
 * The faults live here only. Each module below is replaced by a copy of itself in which one function
 * changes behaviour while `mutant.current` names its fault; with no fault named, every replacement
 * forwards to the original, which the first test checks by replaying with none switched on.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as HttpExchange from '../../src/providers/http-exchange.js';
import type { Message, MessageStreamEvent } from '../../src/protocol/messages.js';
import type * as ToolIdCodec from '../../src/translate/tool-id-codec.js';
import type * as TranslateResponse from '../../src/translate/translate-response.js';
import type * as StreamTranslatorModule from '../../src/translate/stream-translator.js';
import type * as SelectProvider from '../../src/transport/select-provider.js';
import type * as SessionModule from '../../src/transport/session.js';
import type { Session } from '../../src/transport/session.js';
import { behaviours } from './explore.js';
import { CFG_CONSTANTS, type Step } from './model.js';
import {
  formatViolations,
  replayBehaviours,
  startReplayServers,
  type ConformanceProperty,
  type ReplayMode,
  type ReplayServers,
} from './replay.js';

type MutantName = 'm1' | 'm2' | 'm3' | 'm4' | 'm5' | 'm6';

const mutant = vi.hoisted(() => ({ current: undefined as string | undefined }));

// m1: decoding loses the provider's id — an encoded id goes back upstream as the caller saw it.
// m2 (non-streaming): the second tool call of an answer is given the first one's id.
vi.mock('../../src/translate/tool-id-codec.js', async (importOriginal) => {
  const actual = await importOriginal<typeof ToolIdCodec>();
  return {
    ...actual,
    decodeToolId: (messagesId: string): string =>
      mutant.current === 'm1' ? messagesId : actual.decodeToolId(messagesId),
    encodeToolIds: (...args: Parameters<typeof actual.encodeToolIds>): string[] => {
      const ids = actual.encodeToolIds(...args);
      if (mutant.current === 'm2' && ids.length > 1) ids[1] = ids[0]!;
      return ids;
    },
  };
});

// m3 (non-streaming): the Chat Completions choice is handed to the caller untranslated.
vi.mock('../../src/translate/translate-response.js', async (importOriginal) => {
  const actual = await importOriginal<typeof TranslateResponse>();
  return {
    ...actual,
    translateResponse: (...args: Parameters<typeof actual.translateResponse>): Message =>
      mutant.current === 'm3'
        ? ((args[0] as { choices: unknown[] }).choices[0] as Message)
        : actual.translateResponse(...args),
  };
});

// m2 (streaming): the second tool_use block of a stream repeats the first one's id.
// m3 (streaming): each Chat Completions chunk is passed to the caller instead of its events.
vi.mock('../../src/translate/stream-translator.js', async (importOriginal) => {
  const actual = await importOriginal<typeof StreamTranslatorModule>();
  class MutantStreamTranslator extends actual.StreamTranslator {
    #firstToolId: string | undefined;

    override push(
      ...args: Parameters<StreamTranslatorModule.StreamTranslator['push']>
    ): MessageStreamEvent[] {
      const events = super.push(...args);
      return mutant.current === 'm3' ? [args[0] as unknown as MessageStreamEvent] : this.#duplicate(events);
    }

    override finish(
      ...args: Parameters<StreamTranslatorModule.StreamTranslator['finish']>
    ): MessageStreamEvent[] {
      return this.#duplicate(super.finish(...args));
    }

    #duplicate(events: MessageStreamEvent[]): MessageStreamEvent[] {
      if (mutant.current !== 'm2') return events;
      return events.map((event) => {
        if (event.type !== 'content_block_start' || event.content_block.type !== 'tool_use') return event;
        const id = String((event.content_block as { id: unknown }).id);
        if (this.#firstToolId === undefined) {
          this.#firstToolId = id;
          return event;
        }
        return { ...event, content_block: { ...event.content_block, id: this.#firstToolId } };
      });
    }
  }
  return { ...actual, StreamTranslator: MutantStreamTranslator };
});

// m4: after a failed exchange the session still shows the obligations it had before it.
vi.mock('../../src/transport/session.js', async (importOriginal) => {
  const actual = await importOriginal<typeof SessionModule>();
  const keepsStalePending = (real: Session): Session => {
    let stale: readonly string[] | undefined;
    return {
      get pending() {
        return stale ?? real.pending;
      },
      get lastOutcome() {
        return real.lastOutcome;
      },
      get turns() {
        return real.turns;
      },
      async send(request, options) {
        const before = [...real.pending];
        stale = undefined;
        try {
          return await real.send(request, options);
        } catch (error) {
          stale = before;
          throw error;
        }
      },
      stream(request, options) {
        const before = [...real.pending];
        stale = undefined;
        const events = real.stream(request, options);
        return (async function* () {
          try {
            yield* events;
          } catch (error) {
            stale = before;
            throw error;
          }
        })();
      },
      abort() {
        stale = undefined;
        real.abort();
      },
    };
  };
  return {
    ...actual,
    createSession: (...args: Parameters<typeof actual.createSession>): Session => {
      const real = actual.createSession(...args);
      return mutant.current === 'm4' ? keepsStalePending(real) : real;
    },
  };
});

// m5: a request that fails (reset, deadline) never settles: the exchange hangs instead of erroring.
vi.mock('../../src/providers/http-exchange.js', async (importOriginal) => {
  const actual = await importOriginal<typeof HttpExchange>();
  return {
    ...actual,
    httpRequest: async (
      ...args: Parameters<typeof actual.httpRequest>
    ): ReturnType<typeof actual.httpRequest> => {
      try {
        return await actual.httpRequest(...args);
      } catch (error) {
        if (mutant.current === 'm5') return new Promise<never>(() => {});
        throw error;
      }
    },
  };
});

// m6: with both a key and a token, the token wins.
vi.mock('../../src/transport/select-provider.js', async (importOriginal) => {
  const actual = await importOriginal<typeof SelectProvider>();
  return {
    ...actual,
    selectProvider: (
      ...args: Parameters<typeof actual.selectProvider>
    ): ReturnType<typeof actual.selectProvider> => {
      const [options, env, ...rest] = args;
      const both = Boolean(env['ANTHROPIC_API_KEY']) && Boolean(env['TPX_OAUTH_TOKEN']);
      if (mutant.current !== 'm6' || !both) return actual.selectProvider(...args);
      return actual.selectProvider(options, { ...env, ANTHROPIC_API_KEY: undefined }, ...rest);
    },
  };
});

const MUTANTS: readonly { name: MutantName; fault: string; caughtAs: ConformanceProperty }[] = [
  {
    name: 'm1',
    fault: 'the codec decodes an encoded id to a wrong one (the provider id is dropped)',
    caughtAs: 'PairingInv',
  },
  { name: 'm2', fault: 'the codec gives two tool calls of one answer the same id', caughtAs: 'PairingInv' },
  { name: 'm3', fault: 'the Chat Completions answer reaches the caller untranslated', caughtAs: 'ShapeInv' },
  { name: 'm4', fault: 'the session keeps stale pending ids after a failure', caughtAs: 'PairingInv' },
  { name: 'm5', fault: 'a failed exchange hangs instead of erroring', caughtAs: 'Termination' },
  { name: 'm6', fault: 'a key and a token together select tpx', caughtAs: 'SelectionInv' },
];
const MODES: readonly ReplayMode[] = ['send', 'stream'];

/** The same behaviours, taking one from each boot in turn, so that a fault of any boot shows early. */
function interleaveBoots(list: readonly (readonly Step[])[]): (readonly Step[])[] {
  const boots = new Map<string, (readonly Step[])[]>();
  for (const behaviour of list) {
    const boot = JSON.stringify(behaviour[0]!.param);
    boots.set(boot, [...(boots.get(boot) ?? []), behaviour]);
  }
  const queues = [...boots.values()];
  const longest = Math.max(...queues.map((queue) => queue.length));
  return Array.from({ length: longest }, (_, index) =>
    queues.flatMap((queue) => queue.slice(index, index + 1)),
  ).flat();
}

describe('the conformance replay catches injected faults', () => {
  let servers: ReplayServers;
  let decodeToolId: (messagesId: string) => string;
  const cfg = interleaveBoots([...behaviours(CFG_CONSTANTS)]);

  beforeAll(async () => {
    servers = await startReplayServers();
    // The checker reads the session's ids with the original codec, whatever the transport uses.
    decodeToolId = (await vi.importActual<typeof ToolIdCodec>('../../src/translate/tool-id-codec.js'))
      .decodeToolId;
  });
  afterEach(() => {
    mutant.current = undefined;
  });
  afterAll(async () => {
    await servers.close();
  });

  it('replays every .cfg behaviour, the four boots in turn', () => {
    expect(cfg).toHaveLength(466);
    expect(new Set(cfg).size).toBe(466);
    expect(new Set(cfg.slice(0, 4).map((behaviour) => JSON.stringify(behaviour[0]!.param))).size).toBe(4);
  });

  for (const mode of MODES) {
    it(
      `finds nothing with no fault switched on (${mode}, every 8th behaviour)`,
      { timeout: 60_000 },
      async () => {
        const sample = cfg.filter((_, index) => index % 8 === 0);
        const report = await replayBehaviours(sample, { mode, servers, decodeToolId });
        expect(report.violations, formatViolations(report.violations)).toEqual([]);
        expect(report.behaviours).toBe(sample.length);
      },
    );
  }

  for (const { name, fault, caughtAs } of MUTANTS) {
    for (const mode of MODES) {
      it(
        `${name} (${fault}) fails the replay with ${mode}, as ${caughtAs}`,
        { timeout: 60_000 },
        async () => {
          mutant.current = name;
          const report = await replayBehaviours(cfg, {
            mode,
            servers,
            decodeToolId,
            stopAtFirstViolation: true,
            // m5's hang is found by the replay's own deadline: keep it short there.
            ...(name === 'm5' ? { exchangeDeadlineMs: 3_000 } : {}),
          });
          mutant.current = undefined;
          expect(
            report.violations.length,
            `${name} went unnoticed in ${report.behaviours} behaviours`,
          ).toBeGreaterThan(0);
          expect(
            report.violations.map((violation) => violation.property),
            formatViolations(report.violations.slice(0, 3)),
          ).toContain(caughtAs);
        },
      );
    }
  }
});
