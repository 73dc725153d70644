// Runs before every test file (vitest `setupFiles`): see property-settings.ts.
import { configureProperties } from './property-settings.js';

configureProperties();
