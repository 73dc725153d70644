/**
 * The flags of `tpx serve` for the journal and the live view, and their help text:
 *
 * | flag | variable | meaning |
 * |------|----------|---------|
 * | `--journal DIR` | `TPX_JOURNAL_DIR` | one JSON line per exchange in `DIR/*.jsonl` (see `docs/journal.md`) |
 * | `--journal-media hash\|keep` | `TPX_JOURNAL_MEDIA` | image and document data as hash and size (default), or kept |
 * | `--journal-file-mb N` | `TPX_JOURNAL_FILE_MB` | rotate a journal file before it passes N MiB (default 64) |
 * | `--live-exchanges N` | `TPX_LIVE_EXCHANGES` | exchanges the live view keeps (default 200; 0: no live view) |
 *
 * @module
 */
import type { ServeOptions } from '../server/start-server.js';
import { flagOrVariable, UsageError } from './output.js';

/** The `parseArgs` options `readJournalFlags` reads. */
export const JOURNAL_OPTIONS = {
  journal: { type: 'string' },
  'journal-media': { type: 'string' },
  'journal-file-mb': { type: 'string' },
  'live-exchanges': { type: 'string' },
} as const;

/** The help lines of those options. */
export const JOURNAL_HELP = `Journal and live view (docs/journal.md):
  --journal <dir>       one JSON line per exchange in <dir>/*.jsonl, rotated by size [TPX_JOURNAL_DIR]
  --journal-media <hash|keep>  image/document data as sha256 and size (default), or as sent [TPX_JOURNAL_MEDIA]
  --journal-file-mb <n> rotate a journal file before it passes n MiB (default 64) [TPX_JOURNAL_FILE_MB]
  --live-exchanges <n>  exchanges shown by GET /tpx/exchanges and the /tpx/status page (default 200; 0: off)
                        [TPX_LIVE_EXCHANGES]
`;

type Values = Record<string, unknown>;

function wholeNumber(found: { value: string; name: string }, least: number): number {
  const number = Number(found.value);
  if (!/^\d+$/.test(found.value.trim()) || !Number.isSafeInteger(number) || number < least) {
    throw new UsageError(`${found.name} must be a whole number ≥ ${least}, got ${found.value}`);
  }
  return number;
}

/** The journal and live view options of `startServer`, from the flags and their variables. */
export function readJournalFlags(
  values: Values,
  env: Record<string, string | undefined>,
): Pick<ServeOptions, 'journal' | 'liveExchanges'> {
  const options: Pick<ServeOptions, 'journal' | 'liveExchanges'> = {};
  const live = flagOrVariable(values, 'live-exchanges', env, 'TPX_LIVE_EXCHANGES');
  if (live !== undefined) options.liveExchanges = wholeNumber(live, 0);
  const media = flagOrVariable(values, 'journal-media', env, 'TPX_JOURNAL_MEDIA');
  if (media !== undefined && media.value !== 'hash' && media.value !== 'keep') {
    throw new UsageError(`${media.name} must be hash or keep, got ${media.value}`);
  }
  const fileMb = flagOrVariable(values, 'journal-file-mb', env, 'TPX_JOURNAL_FILE_MB');
  const dir = flagOrVariable(values, 'journal', env, 'TPX_JOURNAL_DIR');
  if (dir === undefined) {
    const orphan = media ?? fileMb;
    if (orphan !== undefined) throw new UsageError(`${orphan.name} needs --journal DIR (TPX_JOURNAL_DIR)`);
    return options;
  }
  options.journal = { dir: dir.value };
  if (media !== undefined) options.journal.media = media.value as 'hash' | 'keep';
  if (fileMb !== undefined) options.journal.maxFileBytes = wholeNumber(fileMb, 1) * 1024 * 1024;
  return options;
}
