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
