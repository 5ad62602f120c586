// A throwaway authorization server for bench/run's authorization row, on Node
// built-ins only (node:crypto, node:http): no npm package.
//
//   node jwt.mjs make DIR ISSUER AUDIENCE SCOPE [SECONDS]
//       makes an EC P-256 key pair, writes DIR/jwks.json (the public key, kid
//       "bench", alg ES256, use sig) and prints one JWT access token (RFC 9068:
//       header typ "at+jwt", alg ES256, kid "bench"; claims iss, sub, aud,
//       client_id, scope, iat, exp (now + SECONDS, default 3600), jti), signed
//       with the private key, which is never written anywhere.
//   node jwt.mjs serve FILE
//       serves FILE as application/json at http://127.0.0.1:PORT/jwks.json (any
//       GET path gets it) on a free port, and prints
//       "jwks listening on http://127.0.0.1:PORT/jwks.json", then a line
//       "METHOD PATH" for each request it answers; stops on SIGTERM.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [cmd, ...args] = process.argv.slice(2);
const b64u = b => Buffer.from(b).toString('base64url');

if (cmd === 'make') {
    const [dir, iss, aud, scope, secs] = args;
    if (!dir || !iss || !aud || !scope) {
        console.error('usage: jwt.mjs make DIR ISSUER AUDIENCE SCOPE [SECONDS]');
        process.exit(2);
    }
    const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const jwks = { keys: [{ ...jwk, kid: 'bench', alg: 'ES256', use: 'sig' }] };
    fs.writeFileSync(path.join(dir, 'jwks.json'), JSON.stringify(jwks));
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: 'ES256', typ: 'at+jwt', kid: 'bench' };
    const claims = {
        iss, sub: 'bench-user', aud, client_id: 'bench-client', scope,
        iat: now, exp: now + Number(secs ?? 3600), jti: crypto.randomUUID()
    };
    const input = `${b64u(JSON.stringify(header))}.${b64u(JSON.stringify(claims))}`;
    // JWS ES256: the raw r || s, not DER.
    const sig = crypto.sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    console.log(`${input}.${b64u(sig)}`);
} else if (cmd === 'serve') {
    const [file] = args;
    const body = fs.readFileSync(file);
    const server = http.createServer((req, res) => {
        console.log(`${req.method} ${req.url}`);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
        res.end(body);
    });
    server.listen(0, '127.0.0.1', () => {
        console.log(`jwks listening on http://127.0.0.1:${server.address().port}/jwks.json`);
    });
    process.on('SIGTERM', () => { server.close(); process.exit(0); });
    process.on('SIGINT', () => { server.close(); process.exit(0); });
} else {
    console.error('usage: jwt.mjs make DIR ISSUER AUDIENCE SCOPE [SECONDS] | jwt.mjs serve FILE');
    process.exit(2);
}
