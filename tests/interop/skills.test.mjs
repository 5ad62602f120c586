// Interop: the TypeScript SDK 2.4.0's own skills client (SkillsClient, from
// @modelcontextprotocol/client/ext/skills: the host side of SEP-2640, which checks every entry and
// every file it reads against its size, SHA-256 digest and, for a SKILL.md, its frontmatter as the
// SDK's own YAML reader reads it) lists, gets and reads the skills that `mcp-everything --skills DIR`
// serves, over Streamable HTTP, in revision 2025-11-25 (initialize) and 2026-07-28 (pinned); and
// reads their folders with resources/directory/read.
//
// The folder is made here: skills with nested references, a file that is not UTF-8 (read back as
// a blob), names that need percent-encoding, a folder of skills inside a plain folder, a frontmatter
// with every YAML form our reader takes (folded and literal scalars, lists, mappings, numbers,
// booleans, null, quoted strings with escapes), and skills that must not be served (a bad name, a
// name that is not its folder's, a symbolic link inside, a frontmatter that our reader refuses).
//
// Run by CTest as `node skills.test.mjs` in tests/interop with MCP_BIN_DIR set.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient, SkillVerificationError } from '@modelcontextprotocol/client/ext/skills';

import { overallDeadline, startEverything } from './lib/http.mjs';

overallDeadline(60_000);

const binDir = process.env.MCP_BIN_DIR;
const dir = mkdtempSync(path.join(tmpdir(), 'libmcp-skills-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

function put(rel, content) {
    const p = path.join(dir, rel);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, content);
}

const PDF_MD = [
    '---',
    'name: pdf',
    'description: >',
    '  Fill in, merge and read PDF files',
    '  when the user asks for it.',
    'license: Apache-2.0',
    'allowed-tools:',
    '  - Read',
    '  - Bash(python3:*)',
    'metadata:',
    '  author: "Ada \\u00e9"',
    "  version: '1.0'",
    'x-count: 3',
    'x-ratio: 0.25',
    'x-flag: true',
    'x-none:',
    'x-notes: |',
    '  line one',
    '    indented',
    'x-list: [a, "b c", 7]',
    '---',
    '# PDF',
    '',
    'See [the forms guide](references/FORMS.md).',
    '',
].join('\n');

put('pdf/SKILL.md', PDF_MD);
put('pdf/references/FORMS.md', '# Forms\n\nFill them in.\n');
put('pdf/references/Q&A sp é.md', 'questions\n');
put('pdf/scripts/fill.py', 'print("fill")\n');
put('pdf/bin.dat', Buffer.from([0xff, 0x00, 0x01, 0xfe]));
put('pdf/.hidden', 'never listed\n');
put('Group A/my-skill/SKILL.md', '---\r\nname: my-skill\r\ndescription: A skill in a plain folder\r\n---\r\nbody\r\n');
put('bad-name/SKILL.md', '---\nname: Bad_Name\ndescription: x\n---\n');
put('not-its-folder/SKILL.md', '---\nname: something-else\ndescription: x\n---\n');
put('refused-yaml/SKILL.md', '---\nname: refused-yaml\ndescription: x\nother: {a: 1}\n---\n');
put('linked/SKILL.md', '---\nname: linked\ndescription: x\n---\n');
symlinkSync('/etc/passwd', path.join(dir, 'linked', 'passwd'));

const SERVED = ['skill://Group%20A/my-skill/SKILL.md', 'skill://pdf/SKILL.md'];

let server;
before(async () => {
    server = await startEverything(binDir, ['--skills', dir]);
});
after(async () => {
    await server?.stop();
});

async function connect(versionNegotiation) {
    const client = new Client(
        { name: 'libmcp-interop-skills', version: '1.0.0' },
        { ...(versionNegotiation && { versionNegotiation }) },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    return client;
}

for (const [era, negotiation, version] of [
    ['2025-11-25 (initialize)', undefined, '2025-11-25'],
    ['2026-07-28 (pinned)', { mode: { pin: '2026-07-28' } }, '2026-07-28'],
]) {
    describe(`SkillsClient in ${era}`, () => {
        let client;
        let skills;
        before(async () => {
            client = await connect(negotiation);
            skills = new SkillsClient(client);
        });
        after(async () => {
            await client?.close();
        });

        test('the era and the extension', () => {
            assert.equal(client.getNegotiatedProtocolVersion(), version);
            assert.equal(skills.supported, true);
            assert.equal(skills.directoryRead, true);
        });

        test('list: the skills served, every entry valid, the others left out', async () => {
            const listing = await skills.list();
            assert.deepEqual(listing.invalid, []);
            assert.deepEqual(
                listing.skills.map((s) => s.uri),
                SERVED,
            );
            if (version === '2026-07-28') {
                assert.equal(listing.ttlMs, 0);
                assert.equal(listing.cacheScope, 'private');
            }
            const pdf = listing.skills.find((s) => s.frontmatter.name === 'pdf');
            assert.deepEqual(pdf.frontmatter, {
                name: 'pdf',
                description: 'Fill in, merge and read PDF files when the user asks for it.\n',
                license: 'Apache-2.0',
                'allowed-tools': ['Read', 'Bash(python3:*)'],
                metadata: { author: 'Ada é', version: '1.0' },
                'x-count': 3,
                'x-ratio': 0.25,
                'x-flag': true,
                'x-none': null,
                'x-notes': 'line one\n  indented\n',
                'x-list': ['a', 'b c', 7],
            });
            assert.deepEqual(
                pdf.resources.map((r) => r.uri),
                [
                    'skill://pdf/SKILL.md',
                    'skill://pdf/bin.dat',
                    'skill://pdf/references/FORMS.md',
                    'skill://pdf/references/Q&A%20sp%20%C3%A9.md',
                    'skill://pdf/scripts/fill.py',
                ],
            );
        });

        test('get and read: every file verified (size, digest, and the frontmatter)', async () => {
            for (const uri of SERVED) {
                const { skill } = await skills.get(uri);
                assert.equal(skill.uri, uri);
                const manifest = await skills.read(skill);
                assert.equal(manifest.verified, true);
                assert.deepEqual(manifest.frontmatter, skill.frontmatter);
                for (const r of skill.resources) {
                    const file = await skills.read(skill, r.uri);
                    assert.equal(file.verified, true, r.uri);
                    assert.equal(file.bytes.length, r.size);
                }
            }
            const { skill } = await skills.get('skill://pdf/SKILL.md');
            const manifest = await skills.read(skill);
            assert.equal(manifest.body, PDF_MD.slice(PDF_MD.indexOf('# PDF')));
            const forms = await skills.read(skill, 'references/FORMS.md');
            assert.equal(forms.text, '# Forms\n\nFill them in.\n');
            assert.equal(forms.mimeType, 'text/markdown');
            const bin = await skills.read(skill, 'bin.dat');
            assert.deepEqual([...bin.bytes], [0xff, 0x00, 0x01, 0xfe]);
            assert.equal(bin.text, undefined);
            // A file the entry does not list is refused before any request.
            await assert.rejects(skills.read(skill, '.hidden'), SkillVerificationError);
        });

        test('get: a skill that is not served is -32602', async () => {
            for (const uri of ['skill://nope/SKILL.md', 'skill://bad-name/SKILL.md', 'skill://linked/SKILL.md']) {
                await assert.rejects(skills.get(uri), (e) => e.code === -32602 && /No skill is served/.test(e.message), uri);
            }
        });

        test('readDirectory: the children of a skill and of its folders', async () => {
            const root = await skills.readDirectory('skill://pdf');
            assert.deepEqual(root.resources, [
                { uri: 'skill://pdf/SKILL.md', name: 'SKILL.md', mimeType: 'text/markdown', size: Buffer.byteLength(PDF_MD) },
                { uri: 'skill://pdf/bin.dat', name: 'bin.dat', mimeType: 'application/octet-stream', size: 4 },
                { uri: 'skill://pdf/references', name: 'references', mimeType: 'inode/directory' },
                { uri: 'skill://pdf/scripts', name: 'scripts', mimeType: 'inode/directory' },
            ]);
            const refs = await skills.readDirectory('skill://pdf/references');
            assert.deepEqual(
                refs.resources.map((r) => r.name),
                ['FORMS.md', 'Q&A sp é.md'],
            );
            await assert.rejects(skills.readDirectory('skill://Group%20A'), (e) => e.code === -32602);
        });

        test('resources: each SKILL.md listed, a folder read as a resource is -32602', async () => {
            const { resources } = await client.listResources();
            const skillMds = resources.filter((r) => r.uri.startsWith('skill://')).map((r) => r.uri);
            assert.deepEqual(skillMds.sort(), SERVED);
            await assert.rejects(
                client.readResource({ uri: 'skill://pdf/references' }),
                (e) => e.code === -32602 && /is a directory/.test(e.message),
            );
        });
    });
}

test('the skills not served are named on stderr, with why', () => {
    const err = server.stderr();
    assert.match(err, /bad-name is not served: name must be/);
    assert.match(err, /not-its-folder is not served: name must be the skill folder's name/);
    assert.match(err, /refused-yaml is not served: frontmatter line 4/);
    assert.match(err, /linked is not served: linked\/passwd is a link or a special file/);
});
