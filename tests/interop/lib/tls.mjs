// HTTPS for the interop tests: a throwaway CA and a server certificate for 127.0.0.1 and
// localhost, made with the openssl command (a dependency of the tests; scripts/deps installs
// it) in a temporary directory, and a way for a test file to run under Node with that CA
// trusted, as a user of the SDK would: NODE_EXTRA_CA_CERTS, which Node reads only as it
// starts, so the file runs itself again in a child process that has it. No key is committed.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { spawnDying } from './http.mjs';

const openssl = (args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });

// Makes ca.pem (the CA), server.crt (its certificate for 127.0.0.1 and localhost) and
// server.key in dir; returns their paths.
export function makeCertificates(dir) {
    const f = (n) => path.join(dir, n);
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    openssl(['req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '1', '-subj', '/CN=libmcp interop CA',
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    openssl(['req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=localhost']);
    writeFileSync(f('server.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n' +
        'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n');
    openssl(['x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-set_serial', '2',
        '-days', '1', '-extfile', f('server.ext'), '-out', f('server.crt')]);
    return { ca: f('ca.pem'), cert: f('server.crt'), key: f('server.key') };
}

// In the test file whose import.meta.url is given: the first time, makes the certificates, runs
// the file again with NODE_EXTRA_CA_CERTS naming the CA (and MCP_TEST_TLS_DIR the directory),
// removes the directory and exits with the child's status; in that child, returns
// {ca, cert, key}. The child dies with this process (spawnDying).
export async function withTrustedCertificates(metaUrl) {
    const dir = process.env.MCP_TEST_TLS_DIR;
    if (dir) return { ca: path.join(dir, 'ca.pem'), cert: path.join(dir, 'server.crt'), key: path.join(dir, 'server.key') };
    const made = mkdtempSync(path.join(os.tmpdir(), 'mcp-interop-tls-'));
    let code = 1;
    try {
        const { ca } = makeCertificates(made);
        const child = spawnDying(process.execPath, [fileURLToPath(metaUrl)], {
            env: { ...process.env, MCP_TEST_TLS_DIR: made, NODE_EXTRA_CA_CERTS: ca },
            stdio: 'inherit',
        });
        code = await new Promise((resolve) => child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
    } finally {
        rmSync(made, { recursive: true, force: true });
    }
    process.exit(code);
}
