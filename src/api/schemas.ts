/** The answers' schemas by docs/api-contract.md's tolerance column: promised fields required, sparse optional. */
import { z } from 'zod';
import { MAX_CURSOR_LENGTH } from './limits.js';
import { looseObject, itemsOf } from './schema-bounds.js';
import { isRecord } from '../util/is-record.js';

/** A next cursor: text, or a number read as its digits (contract row 1b), as paging.ts reads it. */
const nextCursor = z.preprocess(
  (value) => (typeof value === 'number' && Number.isFinite(value) ? String(value) : value),
  z.string().max(MAX_CURSOR_LENGTH).nullish(),
);
/** An integer, or one sent as a numeric string (`"crux_rank": "1234"`); no other text. */
const integerOrNumericString = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^\s*-?\d{1,15}\s*$/, 'expected an integer')
    .transform((text) => Number(text)),
]);

export const TechnologyEntrySchema = looseObject({
  t: z.string(),
  c: z.string(),
  /** Any JSON value, or none (contract row 15): nothing in prospect reads it. */
  v: z.unknown().optional(),
});
export type TechnologyEntry = z.infer<typeof TechnologyEntrySchema>;

export const CompanyRowSchema = looseObject({
  domain: z.string().min(1),
  /** `null` tolerated for every field but `domain` (contract row 14): one null must not stop a listing. */
  company_name: z.string().nullable(),
  employee_range: z.string().nullable(),
  industry: z.string().nullable(),
  country: z.string().nullable(),
  /** The order of a listing (row 6a) rests on it: never null. */
  crux_rank: integerOrNumericString,
  /** Sparse (spec §2.1): may be absent or null. */
  phone: z.string().nullish(),
  linkedin_url: z.string().nullish(),
  /** Present only where filled (contract row 14). */
  description: z.string().nullish(),
  tech_count: integerOrNumericString.nullable(),
  technologies: itemsOf(TechnologyEntrySchema)
    .nullable()
    .transform((list) => list ?? []),
});
export type CompanyRow = z.infer<typeof CompanyRowSchema>;

const CompaniesSourceSchema = looseObject({
  dataset: z.string(),
  method: z.string(),
  publisher: z.string(),
  history_since: z.string(),
});

function absentIfNull<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value): z.output<T> | undefined => value ?? undefined);
}

/** Every field optional (contract row 17): a service may send less, or no `meta` at all. */
const CompaniesMetaSchema = looseObject({
  source: absentIfNull(CompaniesSourceSchema),
  field_fill_rates: z
    .record(z.string(), z.number().nullable())
    .nullish()
    .transform(
      (rates) =>
        Object.fromEntries(Object.entries(rates ?? {}).filter(([, v]) => v !== null)) as Record<string, number>,
    ),
  scope: absentIfNull(z.string()),
  total: absentIfNull(integerOrNumericString),
  contact_count: absentIfNull(integerOrNumericString),
});
export type CompaniesMeta = Partial<z.infer<typeof CompaniesMetaSchema>> &
  Pick<z.infer<typeof CompaniesMetaSchema>, 'field_fill_rates'>;
export const CompaniesResponseSchema = looseObject({
  data: itemsOf(CompanyRowSchema),
  meta: CompaniesMetaSchema.nullish().transform((meta): CompaniesMeta => meta ?? { field_fill_rates: {} }),
  next_cursor: nextCursor,
});
export type CompaniesResponse = z.infer<typeof CompaniesResponseSchema>;

export const SENIORITIES = ['cxo', 'vp', 'director', 'manager', 'staff'] as const;
const SenioritySchema = z.enum(SENIORITIES);
export type Seniority = z.infer<typeof SenioritySchema>;

export const isSeniority = (value: unknown): value is Seniority => SenioritySchema.safeParse(value).success;

/** A string field the contract names but the spec does not promise: absent becomes null. */
const optionalText = z.string().nullable().default(null);

export const ContactSchema = looseObject({
  domain: z.string().min(1),
  full_name: optionalText,
  first_name: optionalText,
  last_name: optionalText,
  title: optionalText,
  seniority: SenioritySchema.nullable().default(null),
  department: optionalText,
  business_email: optionalText,
  /** Any string: an unreadable date is unknown freshness (contract row 25), not a failed batch. */
  business_email_last_seen: optionalText,
  linkedin_url: optionalText,
});
export type Contact = z.infer<typeof ContactSchema>;
/** The fields `contact-fields` may rename: the contract's contact fields (row 19). */
export const CONTACT_FIELD_NAMES = Object.keys(ContactSchema.shape) as readonly (keyof typeof ContactSchema.shape)[];

const ContactsMetaSchema = looseObject({
  /** The spec promises a source but not its shape (contract row 18 names these fields). */
  source: looseObject({
    dataset: z.string().optional(),
    method: z.string().optional(),
    publisher: z.string().optional(),
    license: z.string().optional(),
  }).optional(),
  domains_requested: z.number().optional(),
  limit: z.number().optional(),
});
export type ContactsMeta = z.infer<typeof ContactsMetaSchema>;

export const ContactsEnvelopeSchema = looseObject({
  data: itemsOf(ContactSchema),
  meta: ContactsMetaSchema.optional(),
  next_cursor: nextCursor,
});
export type ContactsResponse = z.infer<typeof ContactsEnvelopeSchema>;

const VerifyDataSchema = looseObject({
  email: z.string(),
  /** Passed through whatever its value (contract row 22). */
  status: z.string(),
  checked_at: optionalText,
});

const VerifyMetaSchema = looseObject({
  units_charged: z.number().optional(),
  units_used: z.number().optional(),
});
export type VerifyMeta = z.infer<typeof VerifyMetaSchema>;
/** What `verify()` returns: the data fields plus the usage meta when the service sent any. */
export type VerifyResult = z.infer<typeof VerifyDataSchema> & { meta?: VerifyMeta };

/** The contract's `{data, meta}`, or a bare `{email, status, ...}` (tolerated) read as its data. */
export const VerifyAnswerSchema = z.preprocess(
  (json) => (isRecord(json) && 'data' in json ? json : { data: json }),
  looseObject({ data: VerifyDataSchema, meta: VerifyMetaSchema.optional() }),
);

export type SchemaCheck<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The first problem in one line (`data[3].crux_rank: Invalid input: ...`); itemsOf stops early, so no count. */
export function checkSchema<T>(schema: z.ZodType<T>, json: unknown): SchemaCheck<T> {
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const [first, ...more] = result.error.issues;
  if (first === undefined) return { ok: false, problem: 'it does not match the expected shape' };
  const path = formatPath(first.path) || 'the body';
  return { ok: false, problem: `${path}: ${first.message}${more.length > 0 ? ' (and more problems)' : ''}` };
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

/** A companies page: its envelope, its shape, then its technology entries shared. */
export function checkCompaniesPage(json: unknown): SchemaCheck<CompaniesResponse> {
  const checked = checkSchema(CompaniesResponseSchema, withDataKey(json));
  if (checked.ok) shareTechnologyEntries(checked.value);
  return checked;
}

/** Rows running one technology share one entry (nothing writes to it): a page waiting its turn weighs less. */
function shareTechnologyEntries(page: CompaniesResponse): void {
  const firstByName = new Map<string, TechnologyEntry>();
  for (const { technologies: entries } of page.data) {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (!shareable(entry)) continue;
      const first = firstByName.get(entry.t);
      if (first === undefined) firstByName.set(entry.t, entry);
      else if (first.c === entry.c && first.v === entry.v) entries[i] = first;
    }
  }
}

function shareable(entry: TechnologyEntry): boolean {
  return (entry.v === null || typeof entry.v === 'string') && Object.keys(entry).length === 3;
}

/** The rows under `data`, or under the envelope's one array-valued key (`results`, ...), or a bare array. */
export function withDataKey(json: unknown): unknown {
  if (Array.isArray(json)) return { data: json };
  if (!isRecord(json) || 'data' in json) return json;
  const arrays = Object.keys(json).filter((key) => Array.isArray(json[key]));
  if (arrays.length !== 1) return json;
  const [key] = arrays as [string];
  const { [key]: rows, ...rest } = json;
  return { ...rest, data: rows };
}
