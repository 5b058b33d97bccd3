/** The API client as the rest of prospect uses it (import from here); src/index.ts picks the library from it. */
export * from './client.js';
export * from './contract.js';
export * from './errors.js';
export * from './limits.js';
export * from './proxy.js';
export { type PaidCallWatch, type RequestEvent } from './request-loop.js';
export { MAX_RATE_LIMITED_ATTEMPTS, RETRY_DEFAULTS, type RetryPolicy } from './retry.js';
export { RequestPacer } from './pacer.js';
export { DEFAULT_CONNECT_TIMEOUT_MS } from './dispatcher.js';
export { hostAndPort, tlsFailureError } from './transport-errors.js';
export { type WaitNotice } from './wait-watch.js';
export { errorFromResponse } from './error-responses.js';
export {
  SENIORITIES,
  isSeniority,
  ContactSchema,
  CONTACT_FIELD_NAMES,
  type Seniority,
  type TechnologyEntry,
  type CompanyRow,
  type CompaniesMeta,
  type CompaniesResponse,
  type Contact,
  type ContactsMeta,
  type ContactsResponse,
  type VerifyResult,
  type VerifyMeta,
} from './schemas.js';
