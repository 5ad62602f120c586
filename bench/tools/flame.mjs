// Flame graphs for bench/: folds the stacks that `perf script` prints and draws them as
// an SVG (Node built-ins only; no third-party script, Debian has none packaged).
//
//   perf script -i perf.data | node flame.mjs TITLE > flame.svg
//
// Each frame is a box as wide as the share of samples whose stack passes through it,
// callers below callees (the root, "all", at the bottom); hovering a box shows its
// function and share. Frames the unwinder could not name ("[unknown]") are kept, as
// perf reports them. Colours are by library: ours (mcp-everything, libmcp), the C
// library, the kernel, and other libraries (libuv, jansson, llhttp, OpenSSL...); a frame
// inlined into its caller is coloured as ours.
import { createInterface } from 'node:readline';

const title = process.argv[2] || 'flame graph';
const WIDTH = 1200, ROW = 16, MIN_PX = 1; // boxes narrower than a pixel are left out

// Folds perf script's blocks (a header line, then one frame per line, innermost first).
const folded = new Map();
let stack = [], inBlock = false;
function endBlock() {
    if (stack.length > 0) {
        const key = stack.reverse().join(';');
        folded.set(key, (folded.get(key) || 0) + 1);
    }
    stack = [];
    inBlock = false;
}
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
    if (line.trim() === '') { endBlock(); continue; }
    if (!line.startsWith('\t') && !line.startsWith(' ')) { endBlock(); inBlock = true; continue; }
    if (!inBlock) continue;
    // "\t    7f12 func+0x1a (/usr/lib/x86_64-linux-gnu/libuv.so.1)"
    const m = /^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$/.exec(line);
    if (!m || m[1] === 'ffffffffffffffff') continue; // the unwinder's end marker
    m.shift();
    let fn = m[1].replace(/\+0x[0-9a-f]+$/, '');
    const lib = m[2].split('/').pop();
    if (fn === '[unknown]') fn = `[unknown] (${lib})`;
    stack.push(`${fn}\u0001${lib}`);
}
endBlock();

// A tree of frames with sample counts.
const root = { name: 'all', lib: '', n: 0, kids: new Map() };
for (const [key, n] of folded) {
    let node = root;
    root.n += n;
    for (const f of key.split(';')) {
        const [name, lib] = f.split('\u0001');
        let k = node.kids.get(f);
        if (!k) { k = { name, lib, n: 0, kids: new Map() }; node.kids.set(f, k); }
        k.n += n;
        node = k;
    }
}
if (root.n === 0) { console.error('flame.mjs: no samples with stacks on standard input'); process.exit(1); }

function depthOf(node) {
    let d = 0;
    for (const k of node.kids.values()) d = Math.max(d, depthOf(k));
    return d + 1;
}
const depth = depthOf(root);
const height = (depth + 3) * ROW;
const esc = s => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
function colour(lib) {
    if (/mcp|libmcp|inlined/.test(lib)) return 'hsl(25,90%,60%)';
    if (/kernel/.test(lib)) return 'hsl(200,60%,65%)';
    if (/libc\.so|ld-linux/.test(lib)) return 'hsl(50,80%,60%)';
    return 'hsl(110,45%,60%)';
}
const out = [];
out.push(`<?xml version="1.0" encoding="UTF-8"?>`);
out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="monospace" font-size="11">`);
out.push(`<rect width="100%" height="100%" fill="#fff"/>`);
out.push(`<text x="${WIDTH / 2}" y="${ROW}" text-anchor="middle" font-size="14">${esc(title)} (${root.n} samples)</text>`);
function draw(node, x, level) {
    const w = (node.n / root.n) * WIDTH;
    if (w < MIN_PX) return;
    const y = height - (level + 1) * ROW;
    const pct = ((100 * node.n) / root.n).toFixed(2);
    const label = `${node.name}${node.lib ? ' [' + node.lib + ']' : ''}: ${node.n} samples, ${pct}%`;
    out.push(`<g><title>${esc(label)}</title><rect x="${x.toFixed(2)}" y="${y}" width="${w.toFixed(2)}" height="${ROW - 1}" fill="${colour(node.lib)}" rx="1"/>`);
    const chars = Math.floor((w - 4) / 6.6);
    if (chars >= 3) {
        const t = node.name.length > chars ? node.name.slice(0, chars - 2) + '..' : node.name;
        out.push(`<text x="${(x + 2).toFixed(2)}" y="${y + ROW - 4}">${esc(t)}</text>`);
    }
    out.push('</g>');
    let cx = x;
    const kids = [...node.kids.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const k of kids) { draw(k, cx, level + 1); cx += (k.n / root.n) * WIDTH; }
}
draw(root, 0, 0);
out.push('</svg>');
process.stdout.write(out.join('\n') + '\n');
