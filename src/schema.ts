/**
 * zod for every boundary, as zod/mini: the same checks in functional form, tree-shaken to a few
 * kilobytes. Classic zod costs ~25 ms of startup and ~6 MB of memory before `initialize` can be
 * answered (`npm run bench`); the ACP SDK still brings it along once an agent starts.
 * Import it as `import * as z from './schema.js'`; mini ships no messages, so English is set here.
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
