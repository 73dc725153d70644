/**
 * The HTML page of `GET /tpx/status`: upstreams and the recent exchanges, refreshed every second from
 * `GET /tpx/exchanges`. Everything it needs is in the page: no external asset, no script from
 * elsewhere. Its Content-Security-Policy allows only this page's own script and style (by their
 * sha256) and requests to this proxy.
 *
 * The page holds no data and no secret, so it loads without the proxy token. When the proxy has one,
 * the page's requests need it: open `/tpx/status#token=<token>` (a URL fragment never leaves the
 * browser, and the page removes it from the address bar at once) or type it into the page's token box;
 * either way it is kept in the tab's `sessionStorage` and sent as `Authorization: Bearer`.
 *
 * @module
 */
import { createHash } from 'node:crypto';

const STYLE = `
body{font:14px system-ui,sans-serif;margin:1.5rem;color:#1b1b1b;background:#fafafa}
h1{font-size:1.3rem;margin:0 0 .3rem}h2{font-size:1.05rem;margin:1.2rem 0 .4rem}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #ddd;white-space:nowrap}
td.error{white-space:normal;color:#a40000}
th{background:#eee}.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#05620f}.bad{color:#a40000;font-weight:600}
#state{color:#555}#auth{display:none;margin:.6rem 0}#auth.shown{display:block}
`;

const SCRIPT = `
'use strict';
const tokenKey = 'tpx-proxy-token';
function takeTokenFromHash() {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) { sessionStorage.setItem(tokenKey, fromHash); history.replaceState(null, '', location.pathname); }
}
takeTokenFromHash();
const $ = (id) => document.getElementById(id);
const cell = (row, text, className) => {
  const td = row.insertCell(); td.textContent = text === undefined || text === null ? '' : String(text);
  if (className) td.className = className; return td;
};
const tokens = (usage) => usage ? (usage.input_tokens ?? 0) + ' → ' + (usage.output_tokens ?? 0) : '';
function showUpstreams(upstreams) {
  const body = $('upstreams').tBodies[0]; body.replaceChildren();
  for (const upstream of upstreams) {
    const row = body.insertRow();
    cell(row, upstream.name); cell(row, upstream.provider); cell(row, upstream.baseUrl);
    cell(row, upstream.breaker ?? '—');
  }
}
function showExchanges(exchanges) {
  const body = $('exchanges').tBodies[0]; body.replaceChildren();
  for (const exchange of exchanges) {
    const row = body.insertRow();
    row.dataset.id = exchange.id;
    cell(row, new Date(exchange.time).toLocaleTimeString());
    cell(row, exchange.status, exchange.status < 400 && !exchange.error ? 'ok' : 'bad');
    cell(row, exchange.upstream);
    cell(row, exchange.upstreamModel && exchange.upstreamModel !== exchange.model
      ? exchange.model + ' → ' + exchange.upstreamModel : exchange.model);
    cell(row, tokens(exchange.usage), 'num');
    cell(row, Math.round(exchange.firstByteMs ?? 0), 'num');
    cell(row, Math.round(exchange.durationMs), 'num');
    cell(row, exchange.error ? (exchange.error.code ? exchange.error.code + ': ' : '') + exchange.error.message : '', 'error');
    cell(row, exchange.id);
  }
  $('count').textContent = String(exchanges.length);
}
async function refresh() {
  const token = sessionStorage.getItem(tokenKey);
  try {
    const response = await fetch('/tpx/exchanges', {
      headers: token ? { authorization: 'Bearer ' + token } : {}, cache: 'no-store',
    });
    if (response.status === 401) {
      $('auth').className = 'shown';
      $('state').textContent = 'this proxy needs its token (TPX_PROXY_TOKEN)';
      return;
    }
    if (!response.ok) { $('state').textContent = 'the proxy answered ' + response.status; return; }
    const view = await response.json();
    $('auth').className = '';
    showUpstreams(view.upstreams); showExchanges(view.exchanges);
    $('state').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (error) {
    $('state').textContent = 'the proxy cannot be reached: ' + error.message;
  }
}
$('auth').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(tokenKey, $('token').value); $('token').value = ''; void refresh();
});
addEventListener('hashchange', () => { takeTokenFromHash(); void refresh(); });
void refresh();
setInterval(refresh, 1000);
`;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** The page's HTML. */
export const STATUS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tpx serve — status</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${STYLE}</style></head>
<body>
<h1>tpx serve</h1><div id="state">loading…</div>
<form id="auth"><label>Proxy token <input id="token" type="password" autocomplete="off"></label>
<button type="submit">Show exchanges</button></form>
<h2>Upstreams</h2>
<table id="upstreams"><thead><tr><th>name</th><th>provider</th><th>base URL</th><th>breaker</th></tr></thead><tbody></tbody></table>
<h2>Recent exchanges (<span id="count">0</span>)</h2>
<table id="exchanges"><thead><tr><th>time</th><th>status</th><th>upstream</th><th>model</th>
<th class="num">tokens in → out</th><th class="num">first byte ms</th><th class="num">ms</th><th>error</th><th>id</th></tr></thead><tbody></tbody></table>
<script>${SCRIPT}</script>
</body></html>
`;

/** The page's Content-Security-Policy: its own script and style only, requests to this proxy only. */
export const STATUS_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
