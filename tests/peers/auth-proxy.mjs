#!/usr/bin/env node
// Forwards HTTP requests to TARGET (e.g. http://127.0.0.1:8717) adding
// `Authorization: Bearer $API_KEY`, streaming both ways. For test suites that
// cannot send headers of their own (the MCP conformance suite), so they can be
// run through the Interlock gateway, which requires an API key.
//
//   TARGET=http://127.0.0.1:8717 API_KEY=ilk_... PORT=0 node auth-proxy.mjs
//
// Prints `PROXY_URL=http://127.0.0.1:<port>` on its first stdout line. A Host
// (or Origin) naming this proxy on loopback is rewritten to the target's; any
// other value is passed through unchanged, so the gateway's Host and Origin
// checks still apply to foreign names.
import http from 'node:http';

const target = new URL(process.env.TARGET);
const key = process.env.API_KEY;

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${key}` };
  const me = server.address().port;
  const local = (v) => {
    const m = /^(https?:\/\/)?(localhost|127\.0\.0\.1|\[::1\])(:(\d+))?$/.exec(v ?? '');
    return m && (m[4] === undefined || Number(m[4]) === me) ? m : null;
  };
  if (local(headers.host)) headers.host = target.host;
  const o = local(headers.origin);
  if (o) headers.origin = `${o[1] ?? 'http://'}${target.host}`;
  const up = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    },
  );
  up.on('error', (e) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(String(e));
  });
  req.pipe(up);
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`PROXY_URL=http://127.0.0.1:${server.address().port}`);
});
