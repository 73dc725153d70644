/**
 * Where the repository is, for benchmark code that starts processes or names files.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';

/** The repository root, with a trailing separator. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
