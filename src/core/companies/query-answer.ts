import type { CompaniesMeta, UnanswerableError } from '../../api/index.js';

/** What the service said of one query: its first page's meta, or that it matches nobody. */
export type QueryAnswer = { kind: 'meta'; meta: CompaniesMeta } | { kind: 'no_match'; error: UnanswerableError };
