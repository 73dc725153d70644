/**
 * The fault modes of `fault-modes.ts` against the native `anthropic` provider: through the library and
 * through `tpx serve` with the official SDK.
 */
import { defineFaultSuite } from './fault-harness.js';

defineFaultSuite('anthropic');
