// The TypeScript SDK's client making tools/call echo round trips for the
// benchmarks (bench/run), the counterpart of bench/client_bench.c: Client +
// StreamableHTTPClientTransport keep CONCURRENCY calls in flight for SECONDS
// (after half a second of warm-up), then print one line:
//
//   BENCH calls=N per_s=R client_cpu_us_per_call=U errors=E
//
// Client CPU: process.cpuUsage() (user + system, every thread of the process)
// over the measured part. Usage: node ts-client-bench.mjs URL SECONDS CONCURRENCY
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, seconds, concurrency] = process.argv.slice(2);
if (!url || !(Number(seconds) > 0) || !(Number(concurrency) >= 1)) {
    console.error('usage: node ts-client-bench.mjs URL SECONDS CONCURRENCY');
    process.exit(2);
}
const deadline = setTimeout(() => {
    console.error('ts-client-bench: no end within the deadline');
    process.exit(1);
}, (Number(seconds) + 30) * 1000);

const client = new Client({ name: 'ts-client-bench', version: '1.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);

const now = () => Number(process.hrtime.bigint()) / 1e9;
const measureAt = now() + 0.5;
const endAt = measureAt + Number(seconds);
let measuring = false, calls = 0, errors = 0, cpu0, t0;

async function worker() {
    for (;;) {
        let ok = true;
        try {
            const r = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
            ok = !r.isError;
        } catch {
            ok = false;
        }
        const t = now();
        if (!measuring && t >= measureAt) {
            measuring = true;
            calls = 0;
            errors = 0;
            cpu0 = process.cpuUsage();
            t0 = t;
        }
        if (ok) calls++;
        else errors++;
        if (measuring && t >= endAt) return;
    }
}
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
const secs = now() - t0;
const cpu = process.cpuUsage(cpu0);
const cpuUs = cpu.user + cpu.system;
console.log(`BENCH calls=${calls} per_s=${(calls / secs).toFixed(0)} ` +
    `client_cpu_us_per_call=${(cpuUs / calls).toFixed(1)} errors=${errors}`);
clearTimeout(deadline);
await client.close();
process.exit(errors === 0 ? 0 : 1);
