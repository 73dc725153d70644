/**
 * The name of the upstream that served an exchange, as the journal and the live view show it: the one a
 * route chose (`tpx serve --config`), else `default` for the one upstream of the `TPX_*` /
 * `ANTHROPIC_*` settings.
 *
 * @module
 */
/** The upstream name shown for one exchange (given its log record's `upstream` and `provider`). */
export function exchangeUpstreamName(record: {
  readonly provider: string;
  readonly upstream?: string | undefined;
}): string {
  if (record.upstream !== undefined) return record.upstream;
  return record.provider === 'none' ? 'none' : 'default';
}
