/**
 * The API client as the rest of prospect uses it; the library entry (src/index.ts) picks from it.
 * Import from here, not from the files behind it.
 */
export {
  createClient,
  checkApiKey,
  checkBaseUrl,
  CLIENT_DEFAULTS,
  type ClientOptions,
  type CompanyQuery,
  type CompanyPage,
  type ContactsQuery,
  type ContactsResult,
  type ProspectClient,
  type VerifyAnswer,
  type VerifyCallOptions,
  type ProbeAnswer,
} from './client.js';
export {
  DEFAULT_MAX_ANSWER_BYTES,
  MAX_ANSWER_BYTES_LIMIT,
  MAX_COMPANIES_PER_PAGE,
  MAX_CONTACTS_PER_CALL,
  MAX_DOMAINS_PER_CALL,
} from './limits.js';
export { type PaidCallWatch, type RequestEvent } from './request-loop.js';
export { MAX_RATE_LIMITED_ATTEMPTS } from './retry.js';
export { RequestPacer } from './pacer.js';
export { DEFAULT_CONNECT_TIMEOUT_MS } from './dispatcher.js';
export {
  bareHost,
  decideProxy,
  describeProxy,
  parseProxyUrl,
  portOf,
  type ProxyDecision,
  type ProxySources,
} from './proxy.js';
export { hostAndPort, tlsFailureError } from './transport-errors.js';
export { type WaitNotice } from './wait-watch.js';
export * from './errors.js';
export { errorFromResponse } from './error-responses.js';
export { RETRY_DEFAULTS, type RetryPolicy } from './retry.js';
export {
  CONTRACT_DEFAULTS,
  CONTACT_FIELD_NAMES,
  VERDICTS,
  type ContractSetting,
  type ContractSettings,
  type OpenPoint,
  type Verdict,
} from './contract.js';
export {
  SENIORITIES,
  isSeniority,
  ContactSchema,
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
