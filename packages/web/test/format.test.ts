/**
 * The page's own cleaning of token names (src/format.ts: cleanName): it does not rely on the service
 * for what it shows. Every bidi control and invisible formatting character goes; visible text stays.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cleanName } from '../src/format.ts';

describe('cleanName', () => {
  it('removes bidi controls, zero-width and other invisible formatting characters, controls and line separators', () => {
    const hidden = [0x202a, 0x202e, 0x2066, 0x2069, 0x200b, 0x200d, 0x200e, 0x200f, 0x2060, 0x2064, 0xfeff, 0x061c, 0x180e, 0x00ad, 0x2028, 0x0000, 0x009c];
    for (const c of hidden.map((code) => String.fromCodePoint(code))) {
      assert.equal(cleanName(`${c}Safe${c} Coin${c}`), 'Safe Coin', `U+${c.codePointAt(0)!.toString(16)}`);
      assert.equal(cleanName(c), null);
    }
    assert.equal(cleanName('Safe\u202Eniam\u202C Coin'), 'Safeniam Coin');
  });

  it('keeps visible text of any script, and says null for no name', () => {
    assert.equal(cleanName(' ドージ 🐕 Коин שקל '), 'ドージ 🐕 Коин שקל');
    assert.equal(cleanName(null), null);
    assert.equal(cleanName(undefined), null);
  });
});
