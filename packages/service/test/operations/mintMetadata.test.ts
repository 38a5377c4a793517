/**
 * Names from token metadata are returned cleaned of every character that changes how text reads
 * without being seen: bidi embeddings, overrides, isolates and marks, zero-width characters, the
 * rest of Unicode's Cf category, controls and line separators. A scam token's name must not render
 * as another's. Checked on the parser (every such character) and through the API's preview
 * (`metadata=true`), on a mint whose Metaplex metadata name holds bidi controls.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { createAta, createFundedSigner, createTestApp, createTestMint, writeMetaplexMetadata, type TestApp } from '@cinder/testkit';
import { displayText } from '../../src/operations/mintMetadata.ts';

/** Every character the rule names, and a sample of the rest of Cf (soft hyphen, tag characters, the Arabic number sign). */
const HIDDEN = [
  ...[0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069],
  ...[0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff, 0x061c, 0x180e],
  ...[0x00ad, 0x0600, 0xe0001, 0xe0041, 0x2028, 0x2029, 0x0000, 0x001b, 0x0085],
].map((c) => String.fromCodePoint(c));

describe('displayText: the names shown and returned', () => {
  it('removes every bidi control and invisible formatting character, wherever it is in the name', () => {
    for (const hidden of HIDDEN) {
      const code = `U+${hidden.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      assert.equal(displayText(`${hidden}Sa${hidden}fe Coin${hidden}`), 'Safe Coin', code);
      assert.equal(displayText(hidden), null, `${code} alone is no name`);
    }
  });

  it('keeps what is visible: letters of every script, emoji, spaces inside', () => {
    assert.equal(displayText('  Ember Coin  '), 'Ember Coin');
    assert.equal(displayText('ドージ 🐕 Коин'), 'ドージ 🐕 Коин');
    assert.equal(displayText('שקל'), 'שקל', 'right-to-left letters are text, not controls');
  });
});

describe('GET /api/reclaim_rent?metadata=true', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t?.close();
  });

  it('returns a mint\'s name and symbol cleaned of the bidi controls its metadata holds, beside the mint', async () => {
    const funder = (await createFundedSigner(t.chain)).signer;
    const owner = (await generateKeyPairSigner()).address;
    const mint = await createTestMint(t.chain, funder, { decimals: 0 });
    await createAta(t.chain, funder, owner, mint);
    // Reads as "Safe Coin" plus reversed text: U+202E reverses what follows up to U+202C.
    await writeMetaplexMetadata(t.chain, mint, 'Safe\u202Eniam\u202C Coin\u200B', 'SA\u2066FE\u2069');
    const response = await t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner}&metadata=true` });
    assert.equal(response.statusCode, 200, response.body);
    const [account] = response.json().accounts;
    assert.equal(account.mint, mint);
    assert.equal(account.name, 'Safeniam Coin');
    assert.equal(account.symbol, 'SAFE');
    assert.doesNotMatch(response.body, /\\u202[a-e]|\\u206[6-9]|\\u200b|[\u202A-\u202E\u2066-\u2069\u200B]/i);
  });
});
