/**
 * Polling for a condition that comes true on its own (a process ready, a file written).
 *
 * @module
 */

/** Polls `condition` every `intervalMs` until it holds, or throws after `timeoutMs`, naming `what`. */
export async function waitFor(
  condition: () => Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
