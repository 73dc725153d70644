/**
 * The fault modes of `fault-modes.ts` against the translated `tpx` provider: through the library and
 * through `tpx serve` with the official SDK.
 */
import { defineFaultSuite } from './fault-harness.js';

defineFaultSuite('tpx');
