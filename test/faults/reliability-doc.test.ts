/**
 * `docs/reliability.md` is generated from the fault suite's observations (`TPX_WRITE_RELIABILITY=1`).
 * This keeps it in step with the table of modes: every mode is in it, for every provider it applies to,
 * and every cell says what the suite observes. The fault suite asserts that each run's cell is the one
 * its expectation stands for (`formatExpected`), so comparing each cell here with that expectation
 * compares it with what the suite observed, without depending on the order test files run in.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatExpected, hostileCaseCells } from './fault-harness.js';
import { FAULT_MODES, appliesTo } from './fault-modes.js';
import { HOSTILE_CASES } from './hostile-cases.js';

const report = readFileSync(new URL('../../docs/reliability.md', import.meta.url), 'utf8');
/** The cells of every table row, trimmed. */
const rows = report
  .split('\n')
  .filter((line) => line.startsWith('|'))
  .map((line) =>
    line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim()),
  );

describe('docs/reliability.md', () => {
  it('lists every fault mode with its observed outcome for each provider it applies to', () => {
    expect(report).toContain(`${FAULT_MODES.length} modes`);
    for (const mode of FAULT_MODES) {
      for (const provider of ['anthropic', 'tpx'] as const) {
        const row = rows.find((cells) => cells[0] === `\`${mode.name}\`` && cells[1] === provider);
        if (!appliesTo(mode, provider)) {
          expect(row, `${mode.name} / ${provider}`).toBeUndefined();
          continue;
        }
        expect(row, `${mode.name} / ${provider}: regenerate with TPX_WRITE_RELIABILITY=1`).toBeDefined();
        // mode, provider, then one cell per entry point: library send and stream, proxy JSON and SSE.
        expect(row).toHaveLength(6);
        for (const cell of row!.slice(2)) expect(cell).not.toMatch(/^$|not run|BROKEN/);
      }
    }
  });

  it('says in every cell what the fault suite observes for that mode, provider and entry point', () => {
    const columns = [
      { entry: 'send', via: 'library' },
      { entry: 'stream', via: 'library' },
      { entry: 'send', via: 'proxy' },
      { entry: 'stream', via: 'proxy' },
    ] as const;
    let compared = 0;
    for (const mode of FAULT_MODES) {
      for (const provider of ['anthropic', 'tpx'] as const) {
        if (!appliesTo(mode, provider)) continue;
        const row = rows.find((cells) => cells[0] === `\`${mode.name}\`` && cells[1] === provider);
        columns.forEach(({ entry, via }, index) => {
          const expected = formatExpected(mode, provider, entry, via).replace(/\|/g, '\\|');
          expect(row?.[index + 2], `${mode.name} / ${provider} / ${via} ${entry}`).toBe(expected);
          compared++;
        });
      }
    }
    expect(compared).toBeGreaterThanOrEqual(FAULT_MODES.length * columns.length);
  });

  it('lists every hostile case with its outcome and a test that exists in the file it names', () => {
    for (const hostileCase of HOSTILE_CASES) {
      const expected = hostileCaseCells(hostileCase);
      const row = rows.find((cells) => cells[1] === expected[1]);
      expect(row, `${hostileCase.input}: regenerate with TPX_WRITE_RELIABILITY=1`).toEqual(expected);
      const source = readFileSync(new URL(`../../${hostileCase.test.file}`, import.meta.url), 'utf8');
      expect(source, `${hostileCase.test.file} has no test titled …${hostileCase.test.title}…`).toContain(
        hostileCase.test.title,
      );
    }
  });
});
