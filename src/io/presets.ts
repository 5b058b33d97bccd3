import { UsageError } from '../exit-codes.js';

/**
 * `--preset`: prospect's columns under the headers a CRM's CSV importer maps by default. Each header
 * comes from the vendor's import documentation; docs/crm-import.md links the page for every one.
 * A source column the command does not write (contacts have no company_name) is left out.
 */
const PRESETS = {
  /** HubSpot contact import: labels of HubSpot's default contact properties. */
  hubspot: [
    ['first_name', 'First Name'],
    ['last_name', 'Last Name'],
    ['business_email', 'Email'],
    ['title', 'Job Title'],
    ['company_name', 'Company Name'],
    ['domain', 'Website URL'],
    ['industry', 'Industry'],
    ['country', 'Country/Region'],
  ],
  /** Salesforce Data Import Wizard, leads: the import file labels of "Field Mapping for Importing Leads". */
  salesforce: [
    ['first_name', 'First Name'],
    ['last_name', 'Last Name'],
    ['business_email', 'Email'],
    ['title', 'Title'],
    ['company_name', 'Company'],
    ['domain', 'Website'],
    ['industry', 'Industry'],
    ['country', 'Country'],
  ],
} as const satisfies Record<string, ReadonlyArray<readonly [source: string, header: string]>>;

/**
 * What each CRM needs on every row, by header, and why: a column the run cannot write is refused
 * before any call, and rows that leave it empty are counted in one warning (issue 43).
 */
const REQUIRED: Record<PresetName, Record<string, string>> = {
  hubspot: { Email: 'HubSpot matches contacts by email, so each of them is created again at every import' },
  salesforce: {
    'Last Name': "Salesforce's lead import refuses a lead without one",
    Company: "Salesforce's lead import refuses a lead without one",
  },
};

/** The headers a preset needs filled on every row, each with why. */
export function presetRequirements(name: string): Readonly<Record<string, string>> {
  return Object.hasOwn(REQUIRED, name) ? REQUIRED[name as PresetName] : {};
}

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

/** The (source, header) pairs of a preset, or a usage error naming the presets there are. */
export function presetPairs(name: string): ReadonlyArray<readonly [string, string]> {
  if (!Object.hasOwn(PRESETS, name)) {
    throw new UsageError(`unknown --preset "${name}".`, `Presets are: ${PRESET_NAMES.join(', ')}.`);
  }
  return PRESETS[name as PresetName];
}
