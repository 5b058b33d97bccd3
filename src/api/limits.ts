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
 * Decoded bytes one answer may have, unless the user raises it. A page of 1,000 companies is about
 * 1.8 MB, and 4.3 MB if every row carried the largest stack the sandbox makes (80 technologies, 4.3 KB
 * a row); 1,000 contacts are about 1 MB. 32 MiB fits the largest page 7 times and a usual one 18
 * times. Checking the worst shape an answer may have costs up to about 7.5 times its bytes (a long
 * string of characters past U+00FF, held twice while parsed: BENCHMARKS.md section 10), so 32 MiB is
 * what keeps any answer under 300 MB of memory (issue 41); raising the cap raises that bound.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** The most the setting may raise it to: past 512 MiB, V8 cannot hold the answer's text at all. */
export const MAX_ANSWER_BYTES_LIMIT = 512 * 1024 * 1024;

/**
 * Characters a `next_cursor` may have. A cursor is sent back in the next request line, so one that
 * grows each page would grow every request and the memory that holds it; past this it is a broken answer.
 */
export const MAX_CURSOR_LENGTH = 4096;
