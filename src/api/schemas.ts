/**
 * Response schemas (zod 4). Every type of a service answer is `z.infer` of a schema here.
 *
 * Tolerance rules (docs/api-contract.md, last column):
 * - objects are loose: unknown fields are kept, so JSON output passes them through;
 * - a field the spec promises is required with its type; a field the spec marks as sparse or does
 *   not show is optional/nullable;
 * - nothing is coerced. The one leniency: `business_email_last_seen` is any string (a date, a
 *   date-time, or garbage), because the freshness code truncates date-times and counts an
 *   unparseable date as "unknown freshness" (contract row 25) rather than failing the batch.
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------
// Companies (spec §2.1–2.3, contract rows 14–17)

export const TechnologyEntrySchema = z.looseObject({
  t: z.string(),
  c: z.string(),
  /**
   * Contract row 15 says a version string or null; any JSON value is accepted and passed through.
   * An absent `v` is tolerated too: nothing in prospect reads it.
   */
  v: z.unknown().optional(),
});
export type TechnologyEntry = z.infer<typeof TechnologyEntrySchema>;

export const CompanyRowSchema = z.looseObject({
  domain: z.string().min(1),
  company_name: z.string(),
  employee_range: z.string(),
  industry: z.string(),
  country: z.string(),
  crux_rank: z.number().int(),
  /** Sparse (spec §2.1): may be absent or null. */
  phone: z.string().nullish(),
  linkedin_url: z.string().nullish(),
  /** Present only where filled (contract row 14). */
  description: z.string().nullish(),
  tech_count: z.number().int(),
  technologies: z.array(TechnologyEntrySchema),
});
export type CompanyRow = z.infer<typeof CompanyRowSchema>;

export const CompaniesSourceSchema = z.looseObject({
  dataset: z.string(),
  method: z.string(),
  publisher: z.string(),
  history_since: z.string(),
});

export const CompaniesMetaSchema = z.looseObject({
  source: CompaniesSourceSchema,
  field_fill_rates: z.record(z.string(), z.number()),
  scope: z.string(),
  /** Contract row 17; a real service may omit them. */
  total: z.number().optional(),
  contact_count: z.number().optional(),
});
export type CompaniesMeta = z.infer<typeof CompaniesMetaSchema>;

export const CompaniesResponseSchema = z.looseObject({
  data: z.array(CompanyRowSchema),
  meta: CompaniesMetaSchema,
  /** Absent, null or "" all mean "last page" (contract row 1). */
  next_cursor: z.string().nullish(),
});
export type CompaniesResponse = z.infer<typeof CompaniesResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Contacts (spec §2.4, §4.2, contract rows 18–19)

export const SENIORITIES = ['cxo', 'vp', 'director', 'manager', 'staff'] as const;
export const SenioritySchema = z.enum(SENIORITIES);
export type Seniority = z.infer<typeof SenioritySchema>;

export function isSeniority(value: unknown): value is Seniority {
  return typeof value === 'string' && (SENIORITIES as readonly string[]).includes(value);
}

/** A string field the contract names but the spec does not promise: absent becomes null. */
const optionalText = () => z.string().nullable().default(null);

export const ContactSchema = z.looseObject({
  domain: z.string().min(1),
  full_name: optionalText(),
  first_name: optionalText(),
  last_name: optionalText(),
  title: optionalText(),
  seniority: SenioritySchema.nullable().default(null),
  department: optionalText(),
  business_email: optionalText(),
  /** Any string: see the tolerance rules at the top of this file. */
  business_email_last_seen: optionalText(),
  linkedin_url: optionalText(),
});
export type Contact = z.infer<typeof ContactSchema>;

export const ContactsMetaSchema = z.looseObject({
  /** The spec promises a source but not its shape (contract row 18 names these fields). */
  source: z
    .looseObject({
      dataset: z.string().optional(),
      method: z.string().optional(),
      publisher: z.string().optional(),
      license: z.string().optional(),
    })
    .optional(),
  domains_requested: z.number().optional(),
  limit: z.number().optional(),
});
export type ContactsMeta = z.infer<typeof ContactsMetaSchema>;

export const ContactsEnvelopeSchema = z.looseObject({
  data: z.array(ContactSchema),
  meta: ContactsMetaSchema.optional(),
  next_cursor: z.string().nullish(),
});

/** The contract's envelope, or a bare array of contacts (contract row 18, last column). */
export const ContactsResponseSchema = z.union([ContactsEnvelopeSchema, z.array(ContactSchema)]);
export type ContactsResponse = z.infer<typeof ContactsResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Verify (contract rows 22–23; the spec shows nothing of it)

export const VerifyDataSchema = z.looseObject({
  email: z.string(),
  /** Passed through whatever its value (contract row 22). */
  status: z.string(),
  checked_at: optionalText(),
});

export const VerifyMetaSchema = z.looseObject({
  units_charged: z.number().optional(),
  units_used: z.number().optional(),
});
export type VerifyMeta = z.infer<typeof VerifyMetaSchema>;

/** On the wire: `{data:{...}, meta:{...}}`; a bare `{email,status,...}` is accepted too. */
export const VerifyResponseSchema = z.union([
  z.looseObject({ data: VerifyDataSchema, meta: VerifyMetaSchema.optional() }),
  VerifyDataSchema,
]);

/** What `verify()` returns: the data fields plus the usage meta when the service sent any. */
export const VerifyResultSchema = VerifyDataSchema.extend({ meta: VerifyMetaSchema.optional() });
export type VerifyResult = z.infer<typeof VerifyResultSchema>;

// ---------------------------------------------------------------------------------------------

export type SchemaCheck<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * Validates and names the first problem in one line, e.g. `data[3].crux_rank: Invalid input:
 * expected number, received string (and 2 more problems)`.
 */
export function checkSchema<T>(schema: z.ZodType<T>, json: unknown): SchemaCheck<T> {
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues;
  const first = issues[0];
  if (first === undefined) return { ok: false, problem: 'it does not match the expected shape' };
  const path = formatPath(first.path);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return { ok: false, problem: `${path === '' ? 'the body' : path}: ${first.message}${more}` };
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

// ---------------------------------------------------------------------------------------------
// Companies pages, fast

/**
 * `checkSchema(CompaniesResponseSchema, json)`, several times faster on the rows (a page holds
 * 1 000 rows of about 25 technology entries each, and zod's generic walk was a quarter of the CPU
 * of a large export). The rows are checked here by hand against the same rules as CompanyRowSchema;
 * a page whose rows all pass is the value zod would have returned (same fields, same key order,
 * same values), and the rest of the page (meta, next_cursor) is checked by zod. Any row this check
 * does not accept, or a key order zod would have changed, sends the whole page through zod, so
 * every failure, and its message, is zod's. test/unit/api-schemas-fast.test.ts holds the two equal.
 */
export function checkCompaniesResponse(json: unknown): SchemaCheck<CompaniesResponse> {
  if (isPlainObject(json) && Array.isArray(json.data)) {
    const rows = checkRowsFast(json.data);
    if (rows !== undefined) {
      const rest = checkSchema(CompaniesResponseSchema, { ...json, data: [] });
      if (rest.ok) {
        rest.value.data = rows;
        return rest;
      }
    }
  }
  return checkSchema(CompaniesResponseSchema, json);
}

type FieldCheck = (value: unknown) => boolean;
const isString: FieldCheck = (value) => typeof value === 'string';
const isNullishString: FieldCheck = (value) => value === undefined || value === null || typeof value === 'string';
// zod 4: z.number().int() accepts safe integers only.
const isInteger: FieldCheck = (value) => typeof value === 'number' && Number.isSafeInteger(value);

/** CompanyRowSchema's fields in its order, with the same rules; `technologies` is checked apart. */
const ROW_FIELDS: ReadonlyArray<readonly [key: string, required: boolean, check: FieldCheck]> = [
  ['domain', true, (value) => typeof value === 'string' && value.length >= 1],
  ['company_name', true, isString],
  ['employee_range', true, isString],
  ['industry', true, isString],
  ['country', true, isString],
  ['crux_rank', true, isInteger],
  ['phone', false, isNullishString],
  ['linkedin_url', false, isNullishString],
  ['description', false, isNullishString],
  ['tech_count', true, isInteger],
  ['technologies', true, (value) => Array.isArray(value) && value.every(isTechnologyEntry)],
];
const ROW_FIELD_INDEX = new Map(ROW_FIELDS.map(([key], index) => [key, index]));
const REQUIRED_ROW_FIELDS = ROW_FIELDS.filter(([, required]) => required).length;

// The hand check must follow the schema: a field added to CompanyRowSchema without it here fails
// every test at import, not silently in production.
if (Object.keys(CompanyRowSchema.shape).join(',') !== ROW_FIELDS.map(([key]) => key).join(',')) {
  throw new Error('prospect: checkCompaniesResponse is out of step with CompanyRowSchema');
}
if (Object.keys(TechnologyEntrySchema.shape).join(',') !== 't,c,v') {
  throw new Error('prospect: checkCompaniesResponse is out of step with TechnologyEntrySchema');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The rows as zod would return them, or undefined to let zod decide (and word the problem). */
function checkRowsFast(data: unknown[]): CompanyRow[] | undefined {
  for (const row of data) {
    if (!isCompanyRow(row)) return undefined;
  }
  // Zod returns copies; these are the parsed objects themselves, equal field for field and in the
  // same key order, and nothing else holds them.
  return data as CompanyRow[];
}

/**
 * Zod's output lists the schema's fields first, in schema order, then unknown ones in input order.
 * A row is accepted only when its keys are already in that order, so returning it as it is equals
 * zod's copy; `__proto__` (a plain property in JSON.parse output, a setter on assignment) is left to zod.
 */
function isCompanyRow(row: unknown): boolean {
  if (!isPlainObject(row)) return false;
  let next = 0;
  let required = 0;
  let inExtras = false;
  for (const key in row) {
    const index = ROW_FIELD_INDEX.get(key);
    if (index === undefined) {
      if (key === '__proto__') return false;
      inExtras = true;
      continue;
    }
    if (inExtras || index < next) return false;
    const [, isRequired, check] = ROW_FIELDS[index]!;
    // Skipped fields must be optional ones (zod would report a missing required field).
    for (let skipped = next; skipped < index; skipped++) if (ROW_FIELDS[skipped]![1]) return false;
    if (!check(row[key])) return false;
    if (isRequired) required++;
    next = index + 1;
  }
  return required === REQUIRED_ROW_FIELDS;
}

/** TechnologyEntrySchema: `t` and `c` strings, `v` anything or absent, keys in that order. */
function isTechnologyEntry(entry: unknown): boolean {
  if (!isPlainObject(entry)) return false;
  let position = 0;
  for (const key in entry) {
    if (position === 0) {
      if (key !== 't' || typeof entry.t !== 'string') return false;
    } else if (position === 1) {
      if (key !== 'c' || typeof entry.c !== 'string') return false;
    } else if (key === 't' || key === 'c' || key === '__proto__' || (key === 'v' && position > 2)) {
      return false;
    }
    position++;
  }
  return position >= 2;
}
