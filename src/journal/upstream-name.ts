/**
 * The name of the upstream that served an exchange, as the journal and the live view show it. With one
 * upstream (the `TPX_*` / `ANTHROPIC_*` settings) it is `default`; this is the one place that changes
 * once exchanges carry the name of the upstream a route chose.
 *
 * @module
 */
/** The upstream name shown for one exchange (given its log record's `provider`). */
export function exchangeUpstreamName(record: { readonly provider: string }): string {
  return record.provider === 'none' ? 'none' : 'default';
}
