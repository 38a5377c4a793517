// The pages the README's examples live on (README.md and docs/*.md), read as the test files that run those examples need them.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url)).replace(/\/$/, '');

/** The README and every page of docs/, as repository paths. */
export const DOC_PAGES: readonly string[] = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];

export const readPage = (page: string): Promise<string> => readFile(join(ROOT, page), 'utf8');

/**
 * The text of the section of `page` under the first heading that begins with `heading` (at any
 * level: "Client SDK" finds "## Client SDK (`cinder/client`)"), from the heading to the next
 * heading of the same level or higher. Headings inside code blocks do not count.
 */
export async function sectionOf(page: string, heading: string): Promise<string> {
  const markdown = await readPage(page);
  const lines = markdown.split('\n');
  let fenced = false;
  let start = -1;
  let level = 0;
  for (const [i, line] of lines.entries()) {
    if (line.startsWith('```')) fenced = !fenced;
    const match = fenced ? null : /^(#{1,6}) (.+)$/.exec(line);
    if (!match) continue;
    if (start >= 0 && match[1]!.length <= level) return lines.slice(start, i).join('\n');
    if (start < 0 && match[2]!.startsWith(heading)) {
      start = i;
      level = match[1]!.length;
    }
  }
  assert.ok(start >= 0, `${page} has a section "${heading}…"`);
  return lines.slice(start).join('\n');
}

/** The fenced code blocks of a text: the language after the fence, and the code. */
export function codeBlocksOf(text: string): { lang: string; code: string }[] {
  return [...text.matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}
