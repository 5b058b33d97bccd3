/**
 * The service's industry labels (contract row 38): what `--industry` takes. The service has no
 * industry parameter, so a label is matched here on each row, and a misspelt one would match
 * nobody; it is refused before any call, with the closest labels. A test pins this list to the
 * sandbox's (fixtures/data/industries.json).
 */
import { UsageError } from '../../exit-codes.js';
import { editDistance } from '../../util/text.js';

export const INDUSTRY_LABELS = [
  'software development',
  'it services and it consulting',
  'retail',
  'apparel and fashion',
  'consumer goods',
  'food and beverage',
  'beauty and cosmetics',
  'restaurants',
  'hospitality',
  'travel and tourism',
  'real estate',
  'construction',
  'manufacturing',
  'automotive',
  'financial services',
  'banking',
  'insurance',
  'accounting',
  'legal services',
  'marketing and advertising',
  'media and publishing',
  'entertainment',
  'education',
  'e-learning',
  'hospitals and health care',
  'pharmaceuticals',
  'health, wellness and fitness',
  'non-profit organizations',
  'government administration',
  'telecommunications',
  'transportation and logistics',
  'energy and utilities',
  'staffing and recruiting',
  'sports',
] as const;

/** Each --industry as the service's label (lower case, spaces collapsed); a UsageError names the closest labels. */
export function industryLabels(given: readonly string[]): string[] {
  const labels = given.map((value) => value.trim().toLowerCase().replace(/\s+/g, ' '));
  for (const [i, label] of labels.entries()) {
    if ((INDUSTRY_LABELS as readonly string[]).includes(label)) continue;
    if (label === '') throw new UsageError('--industry cannot be empty.');
    const closest = closestLabels(label);
    throw new UsageError(
      `unknown --industry "${given[i]!.trim()}": the service has no such industry label.`,
      closest.length > 0
        ? `Did you mean ${closest.map((name) => `"${name}"`).join(' or ')}? (prospect count --by industry lists them)`
        : 'prospect count -t <technology> --by industry --top 0 lists the labels.',
    );
  }
  return [...new Set(labels)];
}

/** Up to three labels that hold the text, or within a third of its length in edits of the label or a word of it. */
function closestLabels(label: string): string[] {
  const budget = Math.max(2, Math.floor(label.length / 3));
  const distanceTo = (name: string) =>
    name.includes(label)
      ? 0
      : Math.min(
          editDistance(label, name, budget),
          ...name.split(/[ ,]+/).map((word) => editDistance(label, word, budget)),
        );
  return INDUSTRY_LABELS.map((name) => ({ name, distance: distanceTo(name) }))
    .filter((entry) => entry.distance <= budget)
    .sort((a, b) => a.distance - b.distance)
    .slice(0, 3)
    .map((entry) => entry.name);
}
