// A real authorization server for the authorization tests: oidc-provider (npm, pinned in
// package.json; a certified OpenID Connect / OAuth 2.1 server) in this process, on a free
// loopback port, with resource indicators (RFC 8707) issuing JWT access tokens (RFC 9068)
// for the resources the test names, the client credentials grant, introspection and
// revocation. Its signing keys are made here, so that a test can rotate them.
//
// Opt-in, for the client side of OAuth (see startAuthServer): the authorization code grant
// with PKCE and a programmatic browser that logs a user in and consents (browse), dynamic
// client registration (RFC 7591), refresh tokens rotated on use, the device authorization
// grant (RFC 8628) and a user approving it (approveDevice), short access token lifetimes,
// DPoP (RFC 9449) with or without nonces. oidc-provider always sends iss in authorization
// responses (RFC 9207) and advertises authorization_response_iss_parameter_supported.

import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';

import Provider, { errors } from 'oidc-provider';

export const CLIENT_ID = 'mcp-test-client';
export const CLIENT_SECRET = 'mcp-test-secret-that-is-long-enough';
// The MCP server's own client, for introspection.
export const SERVER_ID = 'mcp-test-server';
export const SERVER_SECRET = 'mcp-test-server-secret-long-enough';

// A fresh RS256 signing key as a private JWK.
export function signingKey() {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };
}

// The cookies of one user agent, by name and path (enough for oidc-provider's session and
// interaction cookies, all on the issuer's origin). Pass one to browse() or approveDevice()
// to keep the user's session from one authorization to the next, as a browser would.
export class CookieJar {
    #cookies = new Map();

    // Takes the Set-Cookie lines of a response to url.
    store(url, lines) {
        for (const line of lines) {
            const [pair, ...attrs] = line.split(';');
            const eq = pair.indexOf('=');
            if (eq <= 0) continue;
            const name = pair.slice(0, eq).trim();
            const value = pair.slice(eq + 1).trim();
            let path = '/';
            let expired = value === '';
            for (const attr of attrs) {
                const i = attr.indexOf('=');
                const key = (i < 0 ? attr : attr.slice(0, i)).trim().toLowerCase();
                const v = i < 0 ? '' : attr.slice(i + 1).trim();
                if (key === 'path' && v.startsWith('/')) path = v;
                else if (key === 'max-age' && Number(v) <= 0) expired = true;
                else if (key === 'expires' && Date.parse(v) <= Date.now()) expired = true;
            }
            const id = `${path}\0${name}`;
            if (expired) this.#cookies.delete(id);
            else this.#cookies.set(id, { name, value, path });
        }
    }

    // The Cookie header for a request to url ('' when none).
    header(url) {
        const p = new URL(url).pathname;
        return [...this.#cookies.values()]
            .filter((c) => p === c.path || p.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
            .sort((a, b) => b.path.length - a.path.length)
            .map((c) => `${c.name}=${c.value}`)
            .join('; ');
    }
}

// The hidden inputs of the HTML forms oidc-provider renders, as {name: value}.
function formInputs(html) {
    const unescape = (v) => v.replace(/&(#x?[0-9a-f]+|amp|lt|gt|quot|apos);/gi, (_, e) => {
        const named = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e.toLowerCase()];
        if (named) return named;
        return String.fromCodePoint(e[1].toLowerCase() === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    });
    const out = {};
    for (const m of html.matchAll(/<input\s+type="hidden"\s+name="([^"]*)"\s+value="([^"]*)"/g)) out[unescape(m[1])] = unescape(m[2]);
    return out;
}

// A page's text without its markup, for error messages.
const pageText = (html) => html.replace(/<(script|style)[^]*?<\/\1>/g, ' ').replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ').trim().slice(0, 500);

// The headers the programmatic browser sends to say who the user is and what they decide;
// the interaction routes below read them (a request without them: the default user approves).
const USER_HEADER = 'x-authserver-user';
const DECISION_HEADER = 'x-authserver-decision';

// Starts the server on port (0: a free one) with keys (private JWKs, the first signs) for the
// resources, {uri: scope} (JWT access tokens) or {uri: {scope, opaque: true, accessTokenTTL}}
// (accessTokenTTL: seconds, this resource's own, instead of the option below). Resolves with
// {issuer, port, token(resource, scope), revoke(token, client), introspection (its URL), stop()}
// and, for the options below, browse(), approveDevice(), revokeGrantOf(), provider.
//
// Options for the client side, all off by default (the server is then exactly as before):
//   authorizationCode: true  the authorization code grant (response type code only) with PKCE
//                            (S256) required of every client (requirePkce: false: of public
//                            clients only), interactions served by this server: browse().
//   deviceFlow: true         the device authorization grant (RFC 8628): approveDevice().
//                            deviceInterval: n adds interval n (seconds) to its responses
//                            (oidc-provider sends none, so a client waits the default 5 s).
//   registration             open dynamic client registration at /reg (RFC 7591); on by default
//                            with either of the above.
//   clients: [metadata]      more clients, registered statically.
//   user: 'user'             the account the browser logs in as unless told another.
//   refreshTokens            'offline_access' (the default with either grant above): issued when
//                            the client asks offline_access (oidc-provider drops that scope unless
//                            prompt=consent is asked too) and registered the refresh_token grant;
//                            'always': to any client that registered the refresh_token grant;
//                            false: never.
//   rotateRefreshToken: true a refresh token is used once: its use returns a new one (reusing
//                            the old one fails with invalid_grant and revokes the whole grant).
//   accessTokenTTL: 600      seconds, of the resources' access tokens (and client credentials').
//   refreshTokenTTL          seconds (oidc-provider's default: 14 days).
//   dpop                     undefined: oidc-provider's default (DPoP accepted, no nonce);
//                            false: off; true: on; {nonce: true}: on, and every DPoP proof must
//                            carry a server nonce (use_dpop_nonce + DPoP-Nonce first).
export async function startAuthServer({
    port = 0,
    keys = [signingKey()],
    resources,
    authorizationCode = false,
    deviceFlow = false,
    registration = authorizationCode || deviceFlow,
    clients = [],
    user = 'user',
    refreshTokens = authorizationCode || deviceFlow ? 'offline_access' : false,
    rotateRefreshToken = true,
    accessTokenTTL = 600,
    refreshTokenTTL,
    requirePkce = true,
    deviceInterval,
    dpop,
}) {
    const interactive = authorizationCode || deviceFlow;
    const server = http.createServer();
    await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
    const bound = server.address().port;
    const issuer = `http://127.0.0.1:${bound}`;
    const scopeOf = (r) => (typeof r === 'string' ? r : r.scope);
    const scopes = [...new Set(Object.values(resources).flatMap((r) => scopeOf(r).split(' ')))];
    const configuration = {
        clients: [
            {
                client_id: SERVER_ID,
                client_secret: SERVER_SECRET,
                grant_types: [],
                redirect_uris: [],
                response_types: [],
                token_endpoint_auth_method: 'client_secret_basic',
            },
            {
                client_id: CLIENT_ID,
                client_secret: CLIENT_SECRET,
                grant_types: ['client_credentials'],
                redirect_uris: [],
                response_types: [],
                token_endpoint_auth_method: 'client_secret_basic',
                scope: scopes.join(' '),
            },
            ...clients,
        ],
        jwks: { keys },
        scopes: refreshTokens === 'offline_access' ? [...scopes, 'offline_access'] : scopes,
        features: {
            clientCredentials: { enabled: true },
            introspection: { enabled: true },
            revocation: { enabled: true },
            devInteractions: { enabled: false },
            resourceIndicators: {
                enabled: true,
                defaultResource: () => undefined,
                useGrantedResource: () => true,
                getResourceServerInfo: (ctx, indicator) => {
                    if (!(indicator in resources)) throw new errors.InvalidTarget();
                    const r = resources[indicator];
                    const opaque = typeof r !== 'string' && r.opaque;
                    return {
                        scope: scopeOf(r),
                        audience: indicator,
                        accessTokenTTL: (typeof r !== 'string' && r.accessTokenTTL) || accessTokenTTL,
                        accessTokenFormat: opaque ? 'opaque' : 'jwt',
                        ...(opaque ? {} : { jwt: { sign: { alg: 'RS256' } } }),
                    };
                },
            },
        },
    };
    if (registration) configuration.features.registration = { enabled: true };
    if (deviceFlow) configuration.features.deviceFlow = { enabled: true };
    if (dpop !== undefined) {
        configuration.features.dPoP = !dpop
            ? { enabled: false }
            : { enabled: true, ...(dpop.nonce ? { nonceSecret: randomBytes(32), requireNonce: () => true } : {}) };
    }
    if (authorizationCode) {
        configuration.responseTypes = ['code'];
        if (requirePkce) configuration.pkce = { required: () => true };
    }
    if (interactive) {
        configuration.findAccount = (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) });
        if (refreshTokens && rotateRefreshToken) configuration.rotateRefreshToken = true;
    }
    if (refreshTokens === 'always') {
        configuration.issueRefreshToken = async (ctx, client) => client.grantTypeAllowed('refresh_token');
    }
    if (interactive) {
        // oidc-provider's defaults, said here so that it does not warn about each on first use.
        const day = 24 * 60 * 60;
        configuration.ttl = { Interaction: () => 60 * 60, Session: () => 14 * day, Grant: () => 14 * day,
            DeviceCode: () => 10 * 60, IdToken: () => 60 * 60,
            AccessToken: (ctx, tok) => tok.resourceServer?.accessTokenTTL || 60 * 60 };
    }
    if (refreshTokenTTL !== undefined) configuration.ttl = { ...configuration.ttl, RefreshToken: () => refreshTokenTTL };

    const provider = new Provider(issuer, configuration);
    provider.proxy = false;
    if (deviceInterval !== undefined) {
        provider.use(async (ctx, next) => {
            await next();
            if (ctx.method === 'POST' && ctx.path === '/device/auth' && ctx.status === 200 && ctx.body?.device_code)
                ctx.body = { ...ctx.body, interval: deviceInterval };
        });
    }
    const callback = provider.callback();

    // The interaction routes (interactions.url's default, /interaction/:uid): the user named by
    // the browser's header (or the default one) logs in, then grants what the client asked for,
    // all the scopes of every resource requested; the decision header may refuse instead:
    // 'deny' at the first prompt, 'refuse' at the consent.
    const interact = async (req, res) => {
        const { prompt, params, session, grantId } = await provider.interactionDetails(req, res);
        const who = req.headers[USER_HEADER] || user;
        const decision = req.headers[DECISION_HEADER] || 'approve';
        const refused = { error: 'access_denied', error_description: 'End-User aborted interaction' };
        if (decision === 'deny' || (decision === 'refuse' && prompt.name === 'consent'))
            return provider.interactionFinished(req, res, refused, { mergeWithLastSubmission: false });
        if (prompt.name === 'login')
            return provider.interactionFinished(req, res, { login: { accountId: who } }, { mergeWithLastSubmission: false });
        if (prompt.name !== 'consent') throw new Error(`prompt ${prompt.name} is not implemented`);
        const grant = grantId
            ? await provider.Grant.find(grantId)
            : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
        const { details } = prompt;
        if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '));
        if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
        for (const [indicator, scope] of Object.entries(details.missingResourceScopes ?? {}))
            grant.addResourceScope(indicator, scope.join(' '));
        const saved = await grant.save();
        return provider.interactionFinished(req, res, { consent: grantId ? {} : { grantId: saved } },
            { mergeWithLastSubmission: true });
    };

    // No keep-alive: a test restarts the server on its port, and a pooled connection to
    // the old one would fail the next request.
    server.on('request', (req, res) => {
        res.shouldKeepAlive = false;
        if (interactive && /^\/interaction\/[^/?]+(\?|$)/.test(req.url ?? '')) {
            interact(req, res).catch((e) => {
                if (!res.headersSent) {
                    res.statusCode = 500;
                    res.setHeader('content-type', 'text/plain');
                }
                res.end(`interaction failed: ${e.message}`);
            });
            return;
        }
        callback(req, res);
    });
    // The client credentials grant, as a client would ask for a token (resource NULL: none).
    const token = async (resource, scope) => {
        const body = new URLSearchParams({ grant_type: 'client_credentials' });
        if (scope) body.set('scope', scope);
        if (resource) body.set('resource', resource);
        const res = await fetch(`${issuer}/token`, {
            method: 'POST',
            headers: {
                authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
                'content-type': 'application/x-www-form-urlencoded',
            },
            body,
        });
        const json = await res.json();
        if (!res.ok) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(json)}`);
        return json.access_token;
    };
    const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
    // Revocation (RFC 7009) as CLIENT_ID, or as client ({client_id, client_secret}; no secret: a
    // public client). oidc-provider answers 200 whatever the token; it refuses (400) a token of
    // another client, and JWT access tokens (they cannot be revoked). Revoking a refresh token
    // revokes its whole grant.
    const revoke = async (tok, client) => {
        const headers = { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' };
        const body = new URLSearchParams({ token: tok });
        if (client) {
            if (client.client_secret) {
                const enc = (v) => encodeURIComponent(v);
                headers.authorization = `Basic ${Buffer.from(`${enc(client.client_id)}:${enc(client.client_secret)}`).toString('base64')}`;
            } else {
                delete headers.authorization;
                body.set('client_id', client.client_id);
            }
        }
        const res = await fetch(`${issuer}/token/revocation`, { method: 'POST', headers, body });
        if (!res.ok) throw new Error(`revocation endpoint: ${res.status} ${await res.text()}`);
    };
    // The administrator's revocation: the grant of tok (a refresh token or an opaque access
    // token, of any client) and every token of it, whoever the client; resolves with whether
    // tok was found.
    const revokeGrantOf = async (tok) => {
        const found = (await provider.RefreshToken.find(tok, { ignoreExpiration: true }))
            ?? (await provider.AccessToken.find(tok, { ignoreExpiration: true }));
        if (!found) return false;
        await found.destroy();
        if (found.grantId) {
            await Promise.all([provider.AccessToken, provider.RefreshToken, provider.AuthorizationCode,
                provider.DeviceCode].map((model) => model.revokeByGrantId(found.grantId)));
            await (await provider.Grant.find(found.grantId))?.destroy();
        }
        return true;
    };

    // The user agent: requests url on the issuer's origin, following its redirects there,
    // keeping cookies in jar; resolves with {redirect} (the first Location off the issuer's
    // origin, not requested) or {status, url, html} (a page it rendered).
    const navigate = async (url, { method = 'GET', body, jar, headers = {}, ms = 10_000 }) => {
        const origin = new URL(issuer).origin;
        url = new URL(url);
        for (let hop = 0; hop < 20; hop++) {
            if (url.origin !== origin) return { redirect: url.href };
            const cookie = jar.header(url);
            const res = await fetch(url, { method, body, redirect: 'manual', signal: AbortSignal.timeout(ms),
                headers: { ...headers, ...(cookie ? { cookie } : {}) } });
            jar.store(url, res.headers.getSetCookie());
            const location = res.headers.get('location');
            if (res.status >= 300 && res.status < 400 && location) {
                await res.arrayBuffer();
                url = new URL(location, url);
                method = 'GET';
                body = undefined;
                continue;
            }
            return { status: res.status, url: url.href, html: await res.text() };
        }
        throw new Error(`more than 20 redirects from ${url}`);
    };
    const decisionOf = ({ consent = true, deny = false }) => (deny ? 'deny' : consent ? 'approve' : 'refuse');

    // The programmatic browser: opens authorizeUrl (the authorization request a client would have
    // the user open), logs in as user and consents (consent: false: refuses at the consent; deny:
    // true: refuses at once), and resolves with the URL the server redirects to, the client's
    // redirect_uri with code, state and iss (or error=access_denied), WITHOUT requesting it.
    // Rejects when the server renders a page instead (e.g. an unregistered redirect_uri); the
    // error has status and page. jar: a CookieJar to keep the session across calls (default: a
    // fresh one, a user who has to log in).
    const browse = async (authorizeUrl, { user: who = user, consent, deny, jar = new CookieJar(), ms = 10_000 } = {}) => {
        const headers = { [USER_HEADER]: who, [DECISION_HEADER]: decisionOf({ consent, deny }) };
        const out = await navigate(authorizeUrl, { jar, headers, ms });
        if (out.redirect) return out.redirect;
        throw Object.assign(new Error(`the authorization server answered ${out.status} at ${out.url}: ${pageText(out.html)}`),
            { status: out.status, page: out.html });
    };

    // The user at the verification URI (RFC 8628 3.3) with userCode: enters it, confirms, logs in
    // as user and consents (deny: true aborts at the confirmation instead; consent: false refuses
    // at the consent). Resolves once the server said so; the polling client then gets its tokens
    // (or access_denied).
    const approveDevice = async (userCode, { user: who = user, consent, deny = false, jar = new CookieJar(), ms = 10_000 } = {}) => {
        const headers = { [USER_HEADER]: who, [DECISION_HEADER]: decisionOf({ consent }) };
        const verification = new URL('/device', issuer);
        const step = async (what, out) => {
            if (out.redirect) throw new Error(`${what}: redirected off the authorization server to ${out.redirect}`);
            if (out.status !== 200) throw new Error(`${what}: ${out.status} ${pageText(out.html)}`);
            return out.html;
        };
        // verification_uri_complete: an auto-submitted form carrying the code and the xsrf token.
        let html = await step('the verification page', await navigate(
            `${verification.href}?user_code=${encodeURIComponent(userCode)}`, { jar, headers, ms }));
        let form = formInputs(html);
        if (!form.xsrf) throw new Error(`the verification page has no form: ${pageText(html)}`);
        html = await step('the code entered', await navigate(verification, { method: 'POST', body: new URLSearchParams(form), jar, headers, ms }));
        form = formInputs(html);
        if (form.confirm === undefined) throw new Error(`no confirmation asked for ${userCode}: ${pageText(html)}`);
        if (deny) {
            delete form.confirm;
            form.abort = 'yes';
        }
        const out = await navigate(verification, { method: 'POST', body: new URLSearchParams(form), jar, headers, ms });
        if (out.redirect) throw new Error(`the device flow redirected off the authorization server to ${out.redirect}`);
        const text = pageText(out.html);
        const refused = deny || consent === false;
        if (refused ? !/interrupted|aborted|denied/i.test(text) : !/Sign-in Success/i.test(text))
            throw new Error(`the device flow ended with ${out.status}: ${text}`);
    };

    const stop = () =>
        new Promise((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        });
    return {
        issuer,
        port: bound,
        token,
        revoke,
        revokeGrantOf,
        browse,
        approveDevice,
        provider,
        introspection: `${issuer}/token/introspection`,
        stop,
    };
}
