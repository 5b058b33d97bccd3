/**
 * The keys an input has already given (normalised domains, email keys), so a repeated one is counted as a
 * duplicate and never sent twice. A 64-bit hash per key in one open-addressing typed array, not a Set of strings,
 * keeps streaming input flat in memory (BENCHMARKS.md section 7).
 *
 * Two keys sharing all 64 bits would read as one, which is counted as a duplicate and never changed silently;
 * the odds are far below any other way an answer is lost. The hash is two 32-bit murmur3-finaliser lanes over
 * the key's UTF-16 units: node:crypto's digests are too slow for every key of an input.
 */
export class SeenKeys {
  /**
   * Slot s is hashes[2s] (high half) and hashes[2s + 1] (low half); an empty slot holds 0/0, so 0/0 is stored as 0/1.
   */
  private hashes = new Uint32Array(2 << 10);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds the key; false when it (or, with the odds above, a key with the same hash) was there already. */
  add(key: string): boolean {
    const [high, low] = hash64(key);
    const slot = this.slotOf(high, low);
    if (this.used(slot)) return false;
    this.hashes[2 * slot] = high;
    this.hashes[2 * slot + 1] = low;
    this.count += 1;
    // Three quarters full at most: linear probing then looks at about 8 slots for a new key, side by side.
    if (this.count * 4 > this.slots() * 3) this.grow();
    return true;
  }

  /** True when the key (or, with the odds above, a key with the same hash) was added. */
  has(key: string): boolean {
    const [high, low] = hash64(key);
    return this.used(this.slotOf(high, low));
  }

  private slots(): number {
    return this.hashes.length >>> 1;
  }

  /** The slot holding this hash, or the empty slot where it would go (linear probing; never full). */
  private slotOf(high: number, low: number): number {
    const mask = this.slots() - 1;
    let slot = (low ^ high) & mask;
    while (this.used(slot) && (this.hashes[2 * slot] !== high || this.hashes[2 * slot + 1] !== low))
      slot = (slot + 1) & mask;
    return slot;
  }

  private used(slot: number): boolean {
    return this.hashes[2 * slot] !== 0 || this.hashes[2 * slot + 1] !== 0;
  }

  private grow(): void {
    const old = this.hashes;
    this.hashes = new Uint32Array(old.length * 2);
    for (let index = 0; index < old.length; index += 2) {
      const [high, low] = [old[index]!, old[index + 1]!];
      if (high === 0 && low === 0) continue;
      const slot = this.slotOf(high, low);
      this.hashes[2 * slot] = high;
      this.hashes[2 * slot + 1] = low;
    }
  }
}

function hash64(key: string): [number, number] {
  let high = 0x9e3779b9 ^ key.length;
  let low = 0x85ebca6b ^ key.length;
  for (let index = 0; index < key.length; index += 1) {
    const unit = key.charCodeAt(index);
    high = Math.imul(high ^ unit, 0xcc9e2d51);
    high = (high << 15) | (high >>> 17);
    low = Math.imul(low ^ unit, 0x1b873593);
    low = (low << 13) | (low >>> 19);
  }
  high = finalMix(high);
  low = finalMix(low ^ high);
  return [high >>> 0, (high === 0 && low === 0 ? 1 : low) >>> 0];
}

function finalMix(value: number): number {
  let mixed = value ^ (value >>> 16);
  mixed = Math.imul(mixed, 0x85ebca6b);
  mixed ^= mixed >>> 13;
  mixed = Math.imul(mixed, 0xc2b2ae35);
  return mixed ^ (mixed >>> 16);
}
