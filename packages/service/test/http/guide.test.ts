/**
 * The docs as a newcomer meets them. On GitHub: every relative link of README.md and docs/*.md
 * names a file that exists, and a heading there when it has a #fragment; every route of the API
 * is documented under a heading on a page at most two clicks from the README. Served by Cinder at
 * /guide: every page answers with the web app's strict CSP, and every link and image of every page
 * (the pages' own links, rewritten) answers 200 over a real socket, its #fragment an id there.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.ts';
import { anchorOf, GUIDE_PATH, guideFiles } from '../../src/http/routes/guide.ts';
import { WEB_APP_CSP } from '../../src/http/routes/webApp.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const PAGES = ['README.md', ...readdirSync(`${ROOT}docs`).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const read = (file: string) => readFileSync(`${ROOT}${file}`, 'utf8');

/** A markdown file's text outside its fenced code blocks. */
const prose = (markdown: string) => markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
/** Relative links and images of a markdown file (external addresses left out). */
const linksOf = (markdown: string) =>
  [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href));
const headingsOf = (markdown: string) => [...prose(markdown).matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim());
const anchorsOf = (markdown: string) => new Set(headingsOf(markdown).map((heading) => anchorOf(heading.replaceAll('`', ''))));

describe('the docs on GitHub', () => {
  it('every relative link of the README and docs/ names a file that exists, and a heading there', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const href of linksOf(read(page))) {
        const [path = '', fragment] = href.split('#', 2);
        const target = path === '' ? page : posix.normalize(posix.join(posix.dirname(page), path));
        if (!existsSync(`${ROOT}${target}`)) broken.push(`${page}: ${href} (no file ${target})`);
        else if (fragment !== undefined && !anchorsOf(read(target)).has(fragment)) broken.push(`${page}: ${href} (no heading #${fragment} in ${target})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('docs/configuration.md has a row for every environment variable the service reads', () => {
    const asked = new Set<string>();
    // loadConfig is the only reader of the environment: it asks for each variable it knows.
    loadConfig(new Proxy({}, { get: (_target, name) => (typeof name === 'string' && asked.add(name), undefined) }));
    const page = read('docs/configuration.md');
    const rows = new Set([...page.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]!));
    assert.ok(asked.size >= 30, `${asked.size} variables read`);
    // The system's own variables that a default comes from (HOME, XDG_STATE_HOME) are named in that default.
    const undocumented = [...asked].filter((name) => !rows.has(name) && !page.includes(`$${name}`));
    assert.deepEqual(undocumented, [], 'variables docs/configuration.md does not name');
  });

  it('the README stays short: at most 200 lines', () => {
    assert.ok(read('README.md').split('\n').length <= 201, `README.md has ${read('README.md').split('\n').length} lines`);
  });
});

describe('the guide at /guide', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await createTestApp();
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  it('documents every route of the API under a heading at most two clicks from the README', async () => {
    // The pages one and two clicks away.
    const near = new Set<string>();
    let frontier = ['README.md'];
    for (let click = 1; click <= 2; click++) {
      const next: string[] = [];
      for (const page of frontier) {
        for (const href of linksOf(read(page))) {
          const path = href.split('#')[0]!;
          if (!path.endsWith('.md')) continue;
          const target = posix.normalize(posix.join(posix.dirname(page), path));
          if (!near.has(target) && existsSync(`${ROOT}${target}`)) next.push(target);
          near.add(target);
        }
      }
      frontier = next;
    }
    const headings = [...near].filter((page) => existsSync(`${ROOT}${page}`)).flatMap((page) => headingsOf(read(page)).map((heading) => ({ page, heading })));
    const document = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })));
    assert.ok(routes.length >= 9, `${routes.length} routes in the document`);
    const undocumented = routes.filter(
      ({ method, path }) =>
        !headings.some(({ heading }) => heading.includes(method) && new RegExp(`${path.replace(/[?{}]/g, '\\$&')}(?![\\w/])`).test(heading)),
    );
    assert.deepEqual(undocumented, [], 'routes with no heading on a page within two clicks of the README');
  });

  it('serves every page with the strict CSP, and every link and image of every page answers', async () => {
    const addresses = [...(await guideFiles()).keys()];
    // Every markdown file has its page: README.md at /guide/readme, docs/index.md at /guide, docs/x.md at /guide/x.
    for (const page of PAGES) {
      const expected = page === 'README.md' ? `${GUIDE_PATH}/readme` : page === 'docs/index.md' ? GUIDE_PATH : `${GUIDE_PATH}/${posix.basename(page, '.md')}`;
      assert.ok(addresses.includes(expected), `${page} is served at ${expected}`);
    }

    const ids = new Map<string, Set<string>>();
    const pages = new Map<string, string>();
    for (const address of addresses.filter((a) => !/\.(css|png)$/.test(a))) {
      const response = await fetch(`${url}${address}`);
      assert.equal(response.status, 200, address);
      assert.equal(response.headers.get('content-security-policy'), WEB_APP_CSP, address);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', address);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/, address);
      const html = await response.text();
      assert.doesNotMatch(html, /<script|\sstyle=|\son[a-z]+=/i, `${address}: nothing the CSP would refuse`);
      pages.set(address, html);
      ids.set(address, new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!)));
    }

    const checked = new Map<string, number>();
    const broken: string[] = [];
    for (const [address, html] of pages) {
      for (const [, href] of html.replace(/<pre>[\s\S]*?<\/pre>/g, '').matchAll(/\s(?:href|src)="([^"]+)"/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(href!)) continue;
        const target = new URL(href!.replaceAll('&amp;', '&'), `${url}${address}`);
        const path = target.pathname;
        if (!checked.has(path)) checked.set(path, (await fetch(target)).status);
        if (checked.get(path) !== 200) broken.push(`${address}: ${href} → ${checked.get(path)}`);
        const fragment = decodeURIComponent(target.hash.slice(1));
        if (fragment && !ids.get(path)?.has(fragment)) broken.push(`${address}: ${href} (no id "${fragment}" on ${path})`);
      }
    }
    assert.deepEqual(broken, []);
    // The pages link to each other, to the API reference, the web app and the screenshot.
    for (const path of [`${GUIDE_PATH}/api-burn`, `${GUIDE_PATH}/readme`, '/docs', '/', `${GUIDE_PATH}/web-app.png`, `${GUIDE_PATH}/guide.css`]) {
      assert.ok(checked.has(path), `some page links to ${path}`);
    }
  });

  it('answers 304 to a page it already sent, and the Swagger UI page links to the guide', async () => {
    const first = await fetch(`${url}${GUIDE_PATH}/money`);
    const etag = first.headers.get('etag');
    assert.ok(etag);
    assert.equal((await fetch(`${url}${GUIDE_PATH}/money`, { headers: { 'if-none-match': etag } })).status, 304);
    const document = (await (await fetch(`${url}/openapi.json`)).json()) as { info: { description: string } };
    assert.ok(document.info.description.includes(`](${GUIDE_PATH})`), document.info.description);
    assert.equal((await fetch(`${url}${GUIDE_PATH}/no-such-page`)).status, 404);
  });
});
