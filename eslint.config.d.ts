// Types for the lint configuration, so the layering test can import its rules.
import type { Linter } from 'eslint';

export declare const layering: Linter.Config[];
declare const config: Linter.Config[];
export default config;
