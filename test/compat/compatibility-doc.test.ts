/**
 * `docs/compatibility.md` quotes `docs/compatibility.json` as the compatibility test wrote it: the table
 * between its markers is the one rendered from the record, and the record is about the Claude Code
 * version `package.json` pins, so pinning another version without re-running the matrix fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DOC_FILE,
  TABLE_END,
  TABLE_START,
  UPDATE_COMMAND,
  readRecord,
  renderTable,
  withTable,
} from './compatibility-record.js';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const doc = readFileSync(DOC_FILE, 'utf8');

describe('docs/compatibility.md and docs/compatibility.json', () => {
  const record = readRecord();

  it('has a record of the matrix', () => {
    expect(record, `run ${UPDATE_COMMAND}`).toBeDefined();
    expect(record!.cells.length).toBeGreaterThan(0);
  });

  it('records the Claude Code version package.json pins', () => {
    expect(record!.claudeCode, `Claude Code was bumped: run ${UPDATE_COMMAND}`).toBe(
      packageJson.devDependencies['@anthropic-ai/claude-code'],
    );
  });

  it('shows the table rendered from the record, between its markers', async () => {
    expect(doc).toContain(TABLE_START);
    expect(doc).toContain(TABLE_END);
    expect(await withTable(doc, renderTable(record!)), `run ${UPDATE_COMMAND}`).toBe(doc);
  });

  it('notices a cell changed in the record but not in the table', async () => {
    const changed = structuredClone(record!);
    changed.cells[0]!.result = changed.cells[0]!.result === 'pass' ? 'fail' : 'pass';
    expect(await withTable(doc, renderTable(changed))).not.toBe(doc);
  });

  it('gives the command that reproduces the record', () => {
    expect(record!.command).toBe(UPDATE_COMMAND);
    expect(doc).toContain(UPDATE_COMMAND);
  });
});
