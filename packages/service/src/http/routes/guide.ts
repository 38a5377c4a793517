/**
 * The docs (docs/*.md, and the README) as HTML pages at /guide, beside the API's Swagger UI at
 * /docs: rendered once at start with marked and served from memory, with the web app's strict
 * Content-Security-Policy (no script at all, nothing from another origin).
 *
 * The pages are written to read on GitHub, so their links are relative file links
 * (`api-burn.md#post-apiburn_tokens`, `../README.md`, `web-app.png`). Each is rewritten to the
 * page's address here (`/guide/api-burn#post-apiburn_tokens`, `/guide/readme`, `/guide/web-app.png`),
 * and headings get GitHub's anchors, so one link works in both places.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import type { Tokens } from 'marked';
import type { CinderApp } from '../types.ts';
import { sendFile, staticFile, type StaticFile } from './webApp.ts';

/** The repository's root, README.md and docs/: from the service's src/http/routes/ and from its production build's dist/http/routes/ alike. */
const ROOT = new URL('../../../../../', import.meta.url);

export const GUIDE_PATH = '/guide';

const STYLE = `
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1f23; background: #fff; }
header { padding: .6rem 1.5rem; background: #1d1f23; }
header a { color: #f3f4f6; margin-right: 1.25rem; text-decoration: none; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
a { color: #b4401a; }
code, pre { font: .9em/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; background: #f4f4f5; }
code { padding: .1em .3em; border-radius: 3px; }
pre { padding: .8rem 1rem; overflow-x: auto; border-radius: 6px; }
pre code { padding: 0; background: none; }
table { border-collapse: collapse; display: block; overflow-x: auto; margin: 1rem 0; }
th, td { border: 1px solid #d4d4d8; padding: .35rem .6rem; text-align: left; vertical-align: top; }
th { background: #f4f4f5; }
img { max-width: 100%; border: 1px solid #d4d4d8; }
h1, h2, h3 { line-height: 1.25; }
@media (prefers-color-scheme: dark) {
  body { color: #e4e4e7; background: #17181b; }
  a { color: #f59e6b; }
  code, pre, th { background: #26282d; }
  th, td, img { border-color: #3f3f46; }
}
`;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The address here of a repository file, or null when the guide does not serve it. */
function addressOf(file: string): string | null {
  if (file === 'README.md') return `${GUIDE_PATH}/readme`;
  if (file === 'docs/index.md') return GUIDE_PATH;
  const page = /^docs\/([a-z0-9-]+)\.md$/.exec(file);
  if (page) return `${GUIDE_PATH}/${page[1]}`;
  if (/^docs\/[a-z0-9-]+\.png$/.test(file)) return `${GUIDE_PATH}/${file.slice('docs/'.length)}`;
  return null;
}

/** A link of the page at `source` (a repository path), as it must read here. Others' addresses are kept. */
function rewrite(href: string, source: string): string {
  if (/^([a-z][a-z0-9+.-]*:|#|\/)/i.test(href)) return href;
  const [path = '', fragment] = href.split('#', 2);
  const address = addressOf(posix.normalize(posix.join(posix.dirname(source), path)));
  if (address === null) return href;
  return fragment === undefined ? address : `${address}#${fragment}`;
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** One markdown file of the repository as a whole HTML page (marked is loaded by the first page, not at start). */
export async function renderGuidePage(markdown: string, source: string): Promise<string> {
  const { Marked } = await import('marked');
  const anchors = new Map<string, number>();
  let title: string | undefined;
  const marked = new Marked({
    gfm: true,
    walkTokens(token) {
      if (token.type === 'link' || token.type === 'image') token.href = rewrite(token.href, source);
    },
    renderer: {
      heading({ tokens, depth, text }: Tokens.Heading) {
        // Repeated headings get -1, -2, … as on GitHub.
        const base = anchorOf(text.replaceAll('`', ''));
        const seen = anchors.get(base) ?? 0;
        anchors.set(base, seen + 1);
        if (depth === 1) title ??= text.replaceAll('`', '');
        return `<h${depth} id="${seen === 0 ? base : `${base}-${seen}`}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
    },
  });
  const body = marked.parse(markdown, { async: false });
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title ?? 'Cinder')} · Cinder</title><link rel="icon" href="/app/icon.svg" type="image/svg+xml">` +
    `<link rel="stylesheet" href="${GUIDE_PATH}/guide.css"></head>\n` +
    `<body><header><a href="${GUIDE_PATH}">Docs</a><a href="/docs">API reference (Swagger UI)</a><a href="/">Web app</a></header>\n` +
    `<main>\n${body}</main></body></html>\n`
  );
}

/** The repository file of every page and image of the guide, by its address (nothing read yet). */
export function guideSources(): Map<string, string> {
  const sources = new Map<string, string>();
  for (const source of ['README.md', ...readdirSync(new URL('docs/', ROOT)).map((name) => `docs/${name}`)]) {
    const address = addressOf(source);
    if (address !== null) sources.set(address, source);
  }
  return sources;
}

/** One file of the guide as served: a page rendered, an image as it is. */
async function guideFile(source: string): Promise<StaticFile> {
  const bytes = readFileSync(new URL(source, ROOT));
  return source.endsWith('.md') ? staticFile(Buffer.from(await renderGuidePage(bytes.toString('utf8'), source)), 'text/html; charset=utf-8') : staticFile(bytes, 'image/png');
}

const styleFile = async () => staticFile(Buffer.from(STYLE), 'text/css; charset=utf-8');

/** Every page and image of the guide by its address, from the repository's README.md and docs/, all rendered. */
export async function guideFiles(): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  for (const [address, source] of guideSources()) files.set(address, await guideFile(source));
  files.set(`${GUIDE_PATH}/guide.css`, await styleFile());
  return files;
}

/**
 * One route per page (so an unknown address is the app's 404, a wrong method its 405), each page
 * made on its first visit. The list of pages is the docs/ directory as it is at start.
 */
export function registerGuide(app: CinderApp): void {
  const routes = new Map<string, () => Promise<StaticFile>>([...guideSources()].map(([address, source]) => [address, () => guideFile(source)]));
  routes.set(`${GUIDE_PATH}/guide.css`, styleFile);
  for (const [address, make] of routes) {
    let file: Promise<StaticFile> | undefined;
    app.get(address, { schema: { hide: true } }, async (request, reply) => {
      // One rendering for the visits that arrive while it runs; a failed one is tried again next time.
      file ??= make().catch((error: unknown) => {
        file = undefined;
        throw error;
      });
      return sendFile(request, reply, await file);
    });
  }
}
