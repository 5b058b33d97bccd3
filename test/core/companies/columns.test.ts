import { describe, expect, it } from 'vitest';
import { technologyNames } from '../../../src/core/companies/columns.js';

describe('technologyNames (the technologies column)', () => {
  it("joins each company's own stack, however many of its leads ask for it", () => {
    const shop = {
      technologies: [
        { t: 'Shopify', c: 'Ecommerce' },
        { t: 'Klaviyo', c: 'Email' },
      ],
    };
    const blog = { technologies: [{ t: 'WordPress', c: 'CMS' }] };
    for (let lead = 0; lead < 3; lead++) {
      expect(technologyNames(shop)).toBe('Shopify;Klaviyo');
      expect(technologyNames(blog)).toBe('WordPress');
    }
    expect(technologyNames({ technologies: [] })).toBe('');
  });
});
