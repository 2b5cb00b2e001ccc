import { readFileSync } from 'node:fs';

/**
 * The dashboard shell. It carries no data, so it is served without a token; everything it
 * shows comes from `/dashboard/api/*`, which needs the admin bearer token.
 */
const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>taskrail · operator dashboard</title>
<link rel="icon" href="/dashboard/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/app.css">
<script src="/dashboard/answer-form.js" defer></script>
<script src="/dashboard/run-policy.js" defer></script>
<script src="/dashboard/output-view.js" defer></script>
<script src="/dashboard/app.js" defer></script>
</head>
<body>
<header>
  <h1>taskrail <span>operator dashboard</span></h1>
  <div id="who"></div>
  <div id="live" class="off" title="live updates">offline</div>
  <button id="logout" type="button" hidden>Forget token</button>
</header>
<section id="login" hidden>
  <form id="login-form">
    <label for="token">Admin token</label>
    <input id="token" type="password" autocomplete="off" required>
    <button type="submit">Open</button>
    <p id="login-error" role="alert"></p>
  </form>
</section>
<main id="app" hidden>
  <form id="filters">
    <label>Status <select id="f-status">
      <option value="">any</option><option>working</option><option>input_required</option>
      <option>completed</option><option value="tool_error">tool error</option><option>failed</option>
      <option>cancelled</option>
    </select></label>
    <label>Waiting <select id="f-waiting">
      <option value="">any</option><option value="backoff">retry backoff</option>
      <option value="sleep">sleep</option><option value="permit">permit</option>
    </select></label>
    <label>Tool <input id="f-tool" list="tools" placeholder="any"></label>
    <label>Principal <input id="f-principal" list="principals" placeholder="any"></label>
    <datalist id="tools"></datalist><datalist id="principals"></datalist>
    <span id="count"></span>
  </form>
  <div id="panes">
    <div id="tasks-wrap"><table id="tasks">
      <colgroup><col class="c-id"><col class="c-status"><col class="c-tool"><col class="c-who">
      <col class="c-age"><col class="c-msg"><col class="c-attempt"><col class="c-action"></colgroup>
      <thead><tr><th>id</th><th>status</th><th>tool</th><th>principal</th><th>age</th>
      <th>message</th><th>attempt</th><th></th></tr></thead>
      <tbody></tbody>
    </table></div>
    <aside id="detail" hidden></aside>
  </div>
</main>
</body>
</html>
`;

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** Only the page's own files: no inline script or style, no other origin, no framing. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** A small rail-and-check mark, so the tab is recognisable. */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#141a26"/>
<path d="M7 10h18M7 22h18" stroke="#9aa4b8" stroke-width="2.5" stroke-linecap="round"/>
<path d="M11 16.5l3.5 3.5 7-8" fill="none" stroke="#22c55e" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/>
</svg>
`;

function asset(body: () => string, type: string): () => Response {
  return () =>
    new Response(body(), {
      headers: {
        'content-type': `${type}; charset=utf-8`,
        'content-security-policy': CSP,
        ...SECURITY_HEADERS,
      },
    });
}

/**
 * A browser file of the page, from `assets/` beside this module (scripts/copy-assets.mjs puts it
 * there in dist/): read on its first request, kept after.
 */
function file(name: string): () => string {
  let text: string | undefined;
  return () => (text ??= readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8'));
}

/** Path → response for the static files of the page. */
export const PAGE_ASSETS: Readonly<Record<string, () => Response>> = {
  '/dashboard': asset(() => HTML, 'text/html'),
  '/dashboard/': asset(() => HTML, 'text/html'),
  '/dashboard/app.js': asset(file('dashboard.js'), 'text/javascript'),
  '/dashboard/answer-form.js': asset(file('answer-form.js'), 'text/javascript'),
  '/dashboard/run-policy.js': asset(file('run-policy.js'), 'text/javascript'),
  '/dashboard/output-view.js': asset(file('output-view.js'), 'text/javascript'),
  '/dashboard/app.css': asset(file('dashboard.css'), 'text/css'),
  '/dashboard/favicon.svg': asset(() => FAVICON, 'image/svg+xml'),
};
