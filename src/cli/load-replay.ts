/**
 * `tpx mock-model --replay FILE`: loads the journal and says what it holds (on stderr, so that stdout
 * keeps only the listening line).
 *
 * @module
 */
import { loadReplayJournal, type ReplayJournal } from '../mock-model/replay.js';
import { UsageError, type CliIo } from './output.js';

/** The journal at `path`, loaded for replay; a usage error when it cannot be read or holds nothing to replay. */
export async function loadReplay(path: string, io: CliIo): Promise<ReplayJournal> {
  let journal: ReplayJournal;
  try {
    journal = await loadReplayJournal(path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UsageError(`cannot read the journal ${path}: ${code ?? (error as Error).message}`);
  }
  for (const { place, reason } of journal.skipped)
    io.stderr(`tpx mock-model: ${place}: skipped: ${reason}\n`);
  if (journal.recordings.length === 0) {
    throw new UsageError(
      `the journal ${path} holds no exchange to replay (record one with tpx serve --journal DIR)`,
    );
  }
  io.stderr(`tpx mock-model: replaying ${journal.recordings.length} recorded exchanges from ${path}\n`);
  return journal;
}
