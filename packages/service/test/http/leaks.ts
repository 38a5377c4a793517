/**
 * Where a private key could show up in an answer or a log line, and a search for it: base58 of
 * the 64-byte key and of its 32-byte seed, hex and base64 of both, the seed's bytes as a number
 * list (the solana-keygen format), and any list of numbers decoded as character codes (how
 * Node's `rawPacket` would print socket bytes) searched again for all of the above.
 */
import { getBase58Decoder } from '@solana/kit';

export interface KeyForms {
  label: string;
  forms: string[];
  seedList: string;
}

export function keyForms(label: string, secretKey: Uint8Array): KeyForms {
  const seed = secretKey.slice(0, 32);
  const base58 = getBase58Decoder();
  const forms = [
    base58.decode(secretKey),
    base58.decode(seed),
    Buffer.from(secretKey).toString('hex'),
    Buffer.from(seed).toString('hex'),
    Buffer.from(seed).toString('hex').toUpperCase(),
    Buffer.from(secretKey).toString('base64'),
    Buffer.from(seed).toString('base64').slice(0, 40),
  ];
  return { label, forms, seedList: [...seed].join(',') };
}

const NUMBER_LIST = /\[\s*\d{1,3}(?:\s*,\s*\d{1,3}){7,}\s*\]/g;

function matches(text: string, key: KeyForms): string | null {
  const form = key.forms.find((f) => text.includes(f));
  if (form) return `${key.label} as ${form.slice(0, 6)}…`;
  if (text.replace(/\s+/g, '').includes(key.seedList)) return `${key.label} as a number list`;
  return null;
}

/** Every place in `text` where one of `keys` shows up, as "<key label> as <form>" strings. */
export function findLeaks(text: string, keys: readonly KeyForms[]): string[] {
  const found: string[] = [];
  const decodedLists = [...text.matchAll(NUMBER_LIST)].map((m) =>
    String.fromCharCode(...JSON.parse(m[0].replace(/\s+/g, '')).filter((n: number) => n < 256)),
  );
  for (const key of keys) {
    const direct = matches(text, key);
    if (direct) found.push(direct);
    for (const decoded of decodedLists) {
      const inside = matches(decoded, key);
      if (inside) found.push(`${inside} inside a number list decoded as character codes`);
    }
  }
  return found;
}
