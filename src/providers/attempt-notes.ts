/**
 * What one upstream attempt shares with whoever observes it: headers to add to its request (a trace
 * context, set before the attempt starts) and the model the provider asked the upstream for (set by the
 * provider once it knows it). The transport creates one per attempt only when an observer is attached,
 * so an unobserved exchange pays nothing.
 *
 * @module
 */
import type { ToolRepair } from '../translate/read-tool-input.js';

/** Per-attempt notes; see the module comment. */
export interface AttemptNotes {
  /**
   * Extra request headers, e.g. `traceparent`. They never replace a header the provider sets itself
   * (credentials, content type), so an observer cannot change what the provider sends.
   */
  headers?: Readonly<Record<string, string>>;
  /** The model named in the upstream request (after `TPX_MODEL` and model mapping). */
  upstreamModel?: string;
  /** The tool calls of the answer that were repaired, fitted to their schema or read from text. */
  repairs?: ToolRepair[];
  /** Sees each request body the attempt sends, as sent (present when the observer asks for bodies). */
  sendsBody?: (body: string) => void;
  /** The named upstream the attempt went to, when routes pick among several (`--config`). */
  upstream?: string;
}

/**
 * Where an attempt's answer translator reports its tool-call repairs: onto the notes, when the attempt
 * is observed; nowhere otherwise.
 */
export function repairNoter(notes: AttemptNotes | undefined): ((repair: ToolRepair) => void) | undefined {
  if (notes === undefined) return undefined;
  return (repair) => {
    (notes.repairs ??= []).push(repair);
  };
}

/** Records the upstream model on the notes, when there are any. */
export function noteUpstreamModel(notes: AttemptNotes | undefined, model: unknown): void {
  if (notes !== undefined && typeof model === 'string') notes.upstreamModel = model;
}

/**
 * Adds the notes' extra headers to `headers` beneath them (the provider's own win) and returns it.
 * `headers` must be the attempt's own, freshly built object: it is added to in place rather than copied,
 * as this runs for every observed attempt.
 */
export function withNotedHeaders(
  headers: Record<string, string>,
  notes: AttemptNotes | undefined,
): Record<string, string> {
  const noted = notes?.headers;
  if (noted === undefined) return headers;
  for (const name of Object.keys(noted)) {
    if (!Object.hasOwn(headers, name)) headers[name] = noted[name]!;
  }
  return headers;
}
