/**
 * The service's bounds on one call, stated once: the client, the flags and the planner of contacts calls
 * all read them here. It imports nothing: the flag table reads it at start-up (README "Start-up").
 */

/** Companies one page may ask for (`limit`; contract row 2: the spec does not show it). */
export const MAX_COMPANIES_PER_PAGE = 1000;
/** Domains one contacts call may name (spec §4.2). */
export const MAX_DOMAINS_PER_CALL = 100;
/** Contacts one contacts call may return (`limit`, spec §4.2 and §8). */
export const MAX_CONTACTS_PER_CALL = 1000;

/**
 * Decoded bytes one answer may have, unless the user raises it: 7 times the largest page the sandbox
 * makes, and what keeps checking any answer under 300 MB of memory (BENCHMARKS.md section 10, issue 41).
 */
export const DEFAULT_MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** The most the setting may raise it to: past 512 MiB, V8 cannot hold the answer's text at all. */
export const MAX_ANSWER_BYTES_LIMIT = 512 * 1024 * 1024;

/** Characters a next page may have: it is sent back in the next request line, so past this it is a broken answer. */
export const MAX_CURSOR_LENGTH = 4096;
