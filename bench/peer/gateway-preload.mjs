// Loaded with `node --expose-gc --import ./gateway-preload.mjs` into the Node
// gateways bench/run measures (mcp-proxy, supergateway); it changes none of
// their code paths:
//
// - A listen() given a port and no host binds 127.0.0.1 instead of every
//   address: supergateway 4.0.0 has no flag for its host (mcp-proxy is given
//   --host 127.0.0.1 and is left as it is).
// - SIGUSR2 runs a full garbage collection and then writes "gateway-preload: gc"
//   on stderr, so that bench/run reads the gateway's memory without garbage, as
//   the TS peer's GET /stats?gc does for the SDK rows.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
    // listen(port) and listen(port, callback), as express's app.listen(port, cb) calls it.
    const [port, cb] = args;
    if (args.length <= 2 && (typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port)))
        && (cb === undefined || typeof cb === 'function')) {
        return cb ? listen.call(this, Number(port), '127.0.0.1', cb) : listen.call(this, Number(port), '127.0.0.1');
    }
    return listen.apply(this, args);
};

process.on('SIGUSR2', () => {
    if (typeof globalThis.gc === 'function') globalThis.gc();
    process.stderr.write('gateway-preload: gc\n');
});
