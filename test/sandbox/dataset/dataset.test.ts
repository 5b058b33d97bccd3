/**
 * The generated company dataset: shapes, uniqueness, order, and the realism rules users query by
 * (platform exclusivity, correlations, head shares, a long tail).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildDataset,
  EMPLOYEE_RANGES,
  generateDataset,
  RANK_BUCKETS,
  type Dataset,
} from '../../../src/sandbox/dataset/index.js';
import { shadowedDuplicates } from '../../../src/sandbox/dataset/stacks.js';
import { testDataset } from '../../helpers/sandbox.js';

let ds: Dataset;
const share = (name: string) => ds.postingsOf(ds.catalog.indexOf(name)).length / ds.size;
const runs = (i: number, name: string) => ds.hasTechnology(i, ds.catalog.indexOf(name));

beforeAll(() => {
  const started = performance.now();
  ds = testDataset();
  console.log(`50,000-company dataset built in ${Math.round(performance.now() - started)} ms`);
});

describe('dataset rows', () => {
  it('fills every field of spec §2.1 with well-formed values', () => {
    const labels = new Set(EMPLOYEE_RANGES.map((r) => r.label));
    for (let i = 0; i < ds.size; i += 97) {
      const row = ds.companyRow(i);
      expect(row.domain).toMatch(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z]{2,})+$/);
      expect(row.company_name.length).toBeGreaterThan(1);
      expect(labels.has(row.employee_range)).toBe(true);
      expect(row.industry).toBe(row.industry.toLowerCase());
      expect(row.country).toBe(row.country.toLowerCase());
      expect(RANK_BUCKETS).toContain(row.crux_rank);
      expect(row.crux_rank).toBeLessThanOrEqual(1_000_000);
      if (row.phone !== null) expect(row.phone).toMatch(/^\+\d{1,3} [\d ()-]+$/);
      if (row.linkedin_url !== null)
        expect(row.linkedin_url).toMatch(/^https:\/\/www\.linkedin\.com\/company\/[a-z0-9-]+$/);
      if ('description' in row) expect(typeof row.description).toBe('string');
      expect(row.tech_count).toBe(row.technologies.length);
      for (const tech of row.technologies) {
        expect(ds.catalog.indexOf(tech.t)).toBeGreaterThanOrEqual(0);
        expect(tech.c).toBe(ds.catalog.categories[ds.catalog.indexOf(tech.t)]);
        expect(tech.v === null || /^\d+(\.\d+)*$/.test(tech.v)).toBe(true);
      }
    }
  });

  it('has unique domains, stored in listing order (crux_rank, then domain)', () => {
    expect(new Set(ds.domains).size).toBe(ds.size);
    const outOfOrder: number[] = [];
    for (let i = 1; i < ds.size; i++) {
      const [a, b] = [ds.crux(i - 1), ds.crux(i)];
      if (!(a < b || (a === b && (ds.domains[i - 1] as string) < (ds.domains[i] as string)))) outOfOrder.push(i);
    }
    expect(outOfOrder).toEqual([]);
  });

  it('fits TLDs to countries', () => {
    const tldShare = (country: string, suffix: string) => {
      let n = 0;
      let hits = 0;
      for (let i = 0; i < ds.size; i++) {
        if (ds.countryOf(i).name !== country) continue;
        n++;
        if ((ds.domains[i] as string).endsWith(suffix)) hits++;
      }
      return hits / n;
    };
    expect(tldShare('united kingdom', '.co.uk')).toBeGreaterThan(0.4);
    expect(tldShare('germany', '.de')).toBeGreaterThan(0.55);
    expect(tldShare('united states', '.com')).toBeGreaterThan(0.7);
  });

  it('spreads ranks over CrUX buckets in proportion to their widths, all in scope', () => {
    const counts = new Map<number, number>();
    for (let i = 0; i < ds.size; i++) counts.set(ds.crux(i), (counts.get(ds.crux(i)) ?? 0) + 1);
    expect(counts.get(1000)).toBe(50);
    expect(counts.get(5000)).toBe(200);
    expect(counts.get(500000)).toBe(20000);
    expect(counts.get(1000000)).toBe(25000);
  });

  it('skews employee ranges to small companies and makes the United States the largest country', () => {
    const byCountry = new Map<string, number>();
    let small = 0;
    for (let i = 0; i < ds.size; i++) {
      byCountry.set(ds.countryOf(i).name, (byCountry.get(ds.countryOf(i).name) ?? 0) + 1);
      if (ds.employee[i] === 0) small++;
    }
    const ranked = [...byCountry].sort((a, b) => b[1] - a[1]);
    expect(ranked[0]?.[0]).toBe('united states');
    expect(byCountry.size).toBeGreaterThanOrEqual(40);
    expect(small / ds.size).toBeGreaterThan(0.6);
  });

  it('reports fill rates over the whole dataset, one decimal', () => {
    let phone = 0;
    let linkedin = 0;
    let description = 0;
    for (let i = 0; i < ds.size; i++) {
      const row = ds.companyRow(i);
      if (row.phone !== null) phone++;
      if (row.linkedin_url !== null) linkedin++;
      if (row.description !== undefined) description++;
    }
    const pct = (n: number) => Math.round((n * 1000) / ds.size) / 10;
    expect(ds.fillRates).toEqual({ phone: pct(phone), linkedin_url: pct(linkedin), description: pct(description) });
    expect(ds.fillRates.phone).toBeGreaterThan(7);
    expect(ds.fillRates.phone).toBeLessThan(13);
    expect(ds.fillRates.linkedin_url).toBeGreaterThan(20);
    expect(ds.fillRates.linkedin_url).toBeLessThan(30);
    expect(ds.fillRates.description).toBeGreaterThan(30);
    expect(ds.fillRates.description).toBeLessThan(40);
  });
});

describe('technology stacks', () => {
  it('holds 5 to 80 distinct technologies, about 25 on average', () => {
    let total = 0;
    const bad: number[] = [];
    for (let i = 0; i < ds.size; i++) {
      const stack = ds.stackOf(i);
      let ascending = true;
      for (let k = 1; k < stack.length; k++) if ((stack[k] as number) <= (stack[k - 1] as number)) ascending = false;
      if (stack.length < 5 || stack.length > 80 || !ascending) bad.push(i);
      total += stack.length;
    }
    expect(bad).toEqual([]);
    expect(total / ds.size).toBeGreaterThan(22);
    expect(total / ds.size).toBeLessThan(28);
  });

  it('gives the head technologies realistic shares', () => {
    const expected: Array<[string, number, number]> = [
      ['jQuery', 0.6, 0.8],
      ['Google Tag Manager', 0.48, 0.62],
      ['Google Analytics', 0.43, 0.57],
      ['Cloudflare', 0.25, 0.4],
      ['WordPress', 0.25, 0.37],
      ['Shopify', 0.04, 0.07],
      ['Open Graph', 0.5, 0.7],
      ['HSTS', 0.3, 0.5],
    ];
    for (const [name, low, high] of expected) {
      expect(share(name), name).toBeGreaterThanOrEqual(low);
      expect(share(name), name).toBeLessThanOrEqual(high);
    }
  });

  it('runs one primary platform per site', () => {
    const platforms = [
      'WordPress',
      'Shopify',
      'Wix',
      'Squarespace',
      'Drupal',
      'Magento',
      'BigCommerce',
      'Joomla',
      'Webflow',
    ].map((n) => ds.catalog.indexOf(n));
    const several: number[] = [];
    for (let i = 0; i < ds.size; i++) if (platforms.filter((t) => ds.hasTechnology(i, t)).length > 1) several.push(i);
    expect(several).toEqual([]);
  });

  it('keeps the correlations users query', () => {
    for (const i of ds.postingsOf(ds.catalog.indexOf('WooCommerce'))) expect(runs(i, 'WordPress')).toBe(true);
    for (const i of ds.postingsOf(ds.catalog.indexOf('Yoast SEO'))) expect(runs(i, 'WordPress')).toBe(true);
    for (const i of ds.postingsOf(ds.catalog.indexOf('Shop Pay'))) expect(runs(i, 'Shopify')).toBe(true);
    const shopify = ds.postingsOf(ds.catalog.indexOf('Shopify'));
    const klaviyo = ds.postingsOf(ds.catalog.indexOf('Klaviyo'));
    const klaviyoOnShopify = [...klaviyo].filter((i) => runs(i, 'Shopify')).length;
    expect(klaviyoOnShopify / shopify.length).toBeGreaterThan(0.35);
    expect(klaviyoOnShopify / shopify.length).toBeLessThan(0.45);
    expect(klaviyoOnShopify / klaviyo.length).toBeGreaterThan(0.7);
  });

  it('has a long tail: most catalog entries run on very few sites', () => {
    const sites = Array.from({ length: ds.catalog.size }, (_, t) => ds.postingsOf(t).length).sort((a, b) => a - b);
    const median = sites[Math.floor(sites.length / 2)] as number;
    expect(median).toBeLessThanOrEqual(20);
    expect(sites.filter((n) => n <= 10).length / sites.length).toBeGreaterThan(0.4);
    // Only the curated head and its companions run on more than 5% of sites.
    expect(sites.filter((n) => n > 0.05 * ds.size).length).toBeLessThan(90);
  });

  it('never generates the later spelling of a name the catalog lists twice in different case', () => {
    const shadowed = shadowedDuplicates(ds.catalog);
    expect(shadowed.size).toBeGreaterThan(0);
    for (const t of shadowed) expect(ds.postingsOf(t).length).toBe(0);
  });
});

describe('determinism', () => {
  it('builds the same dataset twice from the same seed, and another from another seed', () => {
    const a = generateDataset({ companies: 3000, seed: 7 });
    const b = generateDataset({ companies: 3000, seed: 7 });
    expect(b.domains).toEqual(a.domains);
    expect(b.techs).toEqual(a.techs);
    expect(b.contactCounts).toEqual(a.contactCounts);
    expect(JSON.stringify(b.companyRow(42))).toBe(JSON.stringify(a.companyRow(42)));
    const other = generateDataset({ companies: 3000, seed: 8 });
    expect(other.domains).not.toEqual(a.domains);
  });

  it('caches per (companies, seed) within a process', () => {
    expect(buildDataset({ companies: 50_000, seed: 1 })).toBe(ds);
    // A fresh build agrees with the cached one; a small one proves it as well as 50,000 (0.8 s of CPU).
    const small = buildDataset({ companies: 3000, seed: 7 });
    expect(buildDataset({ companies: 3000, seed: 7 })).toBe(small);
    expect(buildDataset({ companies: 3000, seed: 8 })).not.toBe(small);
    expect(buildDataset({ companies: 3001, seed: 7 })).not.toBe(small);
    expect(JSON.stringify(generateDataset({ companies: 3000, seed: 7 }).companyRow(123))).toBe(
      JSON.stringify(small.companyRow(123)),
    );
  });
});

describe('companyRowJson', () => {
  it('is the row serialised, byte for byte, whether or not a version was detected or a field is filled', () => {
    const ds = generateDataset({ companies: 3_000, seed: 7 });
    let versions = 0;
    for (let i = 0; i < ds.size; i++) {
      const row = ds.companyRow(i);
      versions += row.technologies.filter((entry) => entry.v !== null).length;
      expect(ds.companyRowJson(i)).toBe(JSON.stringify(row));
    }
    // The sample covers both kinds of entry.
    expect(versions).toBeGreaterThan(100);
  });
});
