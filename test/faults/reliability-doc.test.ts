/**
 * `docs/reliability.md` is generated from the fault suite's observations (`TPX_WRITE_RELIABILITY=1`).
 * This keeps it in step with the table of modes: every mode is in it, for every provider it applies to,
 * and no observed cell says a run broke.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAULT_MODES, appliesTo } from './fault-modes.js';

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
});
