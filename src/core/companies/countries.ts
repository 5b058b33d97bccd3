/**
 * Countries as people write them (`US`, `usa`, `UK`, `GB`, `Deutschland`, `United States`) made into
 * the service's lower-case English name (`united states`), through the ISO 3166 names of
 * i18n-iso-countries, loaded only when a command is given --country (README "Start-up").
 */
import { createRequire } from 'node:module';
import type * as IsoCountries from 'i18n-iso-countries';

/** The languages whose names are understood: English, and those of the largest markets in the data. */
const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt'] as const;

let library: typeof IsoCountries | undefined;

function isoCountries(): typeof IsoCountries {
  if (library !== undefined) return library;
  // The plain index, not the package's node entry, which registers all 78 languages.
  const requireHere = createRequire(import.meta.url);
  const loaded = requireHere('i18n-iso-countries/index.js') as typeof IsoCountries;
  for (const language of LANGUAGES)
    loaded.registerLocale(requireHere(`i18n-iso-countries/langs/${language}.json`) as IsoCountries.LocaleData);
  library = loaded;
  return loaded;
}

/** The ISO 3166-1 alpha-2 code of what a person wrote (a code, or a name in a known language), if any. */
export function countryCode(written: string): string | undefined {
  const countries = isoCountries();
  const text = written.trim();
  if (/^[a-z]{2}$/i.test(text) && countries.isValid(text.toUpperCase())) return text.toUpperCase();
  if (/^[a-z]{3}$/i.test(text)) {
    const code = countries.alpha3ToAlpha2(text.toUpperCase());
    if (code !== undefined) return code;
  }
  for (const language of LANGUAGES) {
    const code = countries.getAlpha2Code(text, language);
    if (code !== undefined) return code;
  }
  return undefined;
}

/**
 * The service's name of a country (contract row 5): its common English name, lower-case. Of the
 * library's English names, abbreviations (`USA`), inverted or qualified forms (`Korea, Republic of`,
 * `Netherlands (Kingdom of the)`) and non-ASCII spellings are left out; a name that another one
 * contains is the short form of it and wins (`United States` over `United States of America`,
 * `Russia` over `Russian Federation`); otherwise the library's first (official) name.
 */
function serviceCountryName(code: string): string | undefined {
  const names = isoCountries().getName(code, 'en', { select: 'all' });
  if (names === undefined) return undefined;
  const candidates = names.filter(
    (name) => !/^[A-Z.]+$/.test(name) && !/[,(]/.test(name) && /^[\x20-\x7e]+$/.test(name),
  );
  const shortForms = candidates.filter((name) => !candidates.some((other) => other !== name && name.includes(other)));
  return (shortForms[0] ?? names[0])?.toLowerCase();
}

/** What to send for what a person wrote: the service's name when the country is known, else the text lower-cased. */
export function normalizeCountry(written: string): string {
  const code = countryCode(written);
  return (code !== undefined ? serviceCountryName(code) : undefined) ?? written.trim().toLowerCase();
}
