import { describe, expect, it } from 'vitest';
import { redactSecret } from '../../src/config/redact.js';

describe('redactSecret', () => {
  it('shows only the last four characters', () => {
    expect(redactSecret('sk_live_0123456789abf00d')).toBe('…f00d');
  });

  it('shows nothing of a short secret', () => {
    expect(redactSecret('short-key')).toBe('…');
    expect(redactSecret('')).toBe('…');
  });
});
