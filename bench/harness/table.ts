/**
 * Plain-text and Markdown tables for the benchmark report. The same rows feed the console (aligned
 * columns) and `docs/performance.md` (a Markdown table), so the two never disagree.
 *
 * @module
 */

/** A table: a title, a header row and rows of cells, all strings. */
export interface Table {
  title: string;
  header: string[];
  rows: string[][];
  /** Lines printed under the table (how to read it, what a ratio compares). */
  notes?: string[];
}

/** The table with aligned columns, for a terminal. Numbers (cells starting with a digit) align right. */
export function renderText(table: Table): string {
  const widths = table.header.map((cell, column) =>
    Math.max(cell.length, ...table.rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => {
        const width = widths[column]!;
        return /^[\d.-]/.test(cell) && column > 0 ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  const parts = [
    table.title,
    '='.repeat(table.title.length),
    line(table.header),
    line(widths.map((width) => '-'.repeat(width))),
    ...table.rows.map(line),
  ];
  if (table.notes !== undefined && table.notes.length > 0) parts.push('', ...table.notes);
  return `${parts.join('\n')}\n`;
}

/** The table as GitHub-flavoured Markdown, with its title as a level-3 heading. */
export function renderMarkdown(table: Table): string {
  const escape = (cell: string) => cell.replace(/\|/g, '\\|');
  const row = (cells: string[]) => `| ${cells.map(escape).join(' | ')} |`;
  const parts = [
    `### ${table.title}`,
    '',
    row(table.header),
    row(table.header.map(() => '---')),
    ...table.rows.map(row),
  ];
  if (table.notes !== undefined && table.notes.length > 0) parts.push('', ...table.notes);
  return `${parts.join('\n')}\n`;
}
