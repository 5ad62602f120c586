import { startAuthServer } from './lib/authserver.mjs';
import { freePort } from './lib/cluster.mjs';
import { startEverything } from './lib/http.mjs';
const port = await freePort();
const resource = `http://127.0.0.1:${port}/mcp`;
const as = await startAuthServer({ resources: { [resource]: 'mcp:tools mcp:admin' }, authorizationCode: true, deviceFlow: true, deviceInterval: 1, accessTokenTTL: 3 });
const srv = await startEverything('/work/main/build/bin', ['--http', `127.0.0.1:${port}`, '--auth-resource', resource, '--auth-issuer', as.issuer, '--auth-scope', 'mcp:tools', '--auth-method-scope', 'tools/call=mcp:tools mcp:admin']);
console.log(JSON.stringify({ resource, issuer: as.issuer }));
globalThis.as = as;
import http from 'node:http';
// control server: /browse?url=  /device?code=
const ctl = http.createServer(async (req, res) => {
  const u = new URL(req.url, 'http://x');
  try {
    if (u.pathname === '/browse') { const loc = await as.browse(u.searchParams.get('url')); res.end(loc); }
    else if (u.pathname === '/device') { await as.approveDevice(u.searchParams.get('code')); res.end('ok'); }
    else if (u.pathname === '/revoke') { res.end(String(await as.revokeGrantOf(u.searchParams.get('t')))); }
  } catch (e) { res.statusCode = 500; res.end(String(e.stack)); }
});
ctl.listen(9911, '127.0.0.1');
