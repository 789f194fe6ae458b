// Shared check harness for the TypeScript interop scripts: one `ok NAME` or
// `FAIL NAME: WHY` line per check, and a closing `LABEL: N passed, M failed`.

export const MODERN = '2026-07-28';
export const CHECK_TIMEOUT_MS = 20_000;
export const EXPECTED_TOOLS = ['add', 'echo', 'transfer'];

export class CheckFailed extends Error {}

export function expect(cond, why) {
    if (!cond) throw new CheckFailed(why);
}

/** One line for an error, with the fields the SDKs hang on their errors. */
export function describe(err) {
    if (err instanceof CheckFailed) return err.message;
    if (!(err instanceof Error)) return String(err);
    let text = `${err.name}: ${err.message}`;
    const extra = [];
    if (err.code !== undefined && !text.includes(String(err.code))) extra.push(`code ${err.code}`);
    if (err.data?.status !== undefined) extra.push(`status ${err.data.status}`);
    if (extra.length) text += ` (${extra.join(', ')})`;
    return text.replace(/\s+/g, ' ').slice(0, 600);
}

function withTimeout(promise, ms) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CheckFailed(`no answer within ${ms / 1000}s`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class Checks {
    constructor(label) {
        this.label = label;
        this.passed = 0;
        this.failed = 0;
    }

    ok(name, note) {
        this.passed++;
        console.log(`ok ${name}${note ? ` (${note})` : ''}`);
    }

    fail(name, why) {
        this.failed++;
        console.log(`FAIL ${name}: ${why}`);
    }

    /** Run one check; never throws. Returns whether it passed. */
    async run(name, body, timeoutMs = CHECK_TIMEOUT_MS) {
        try {
            const note = await withTimeout(Promise.resolve().then(body), timeoutMs);
            this.ok(name, note);
            return true;
        } catch (err) {
            this.fail(name, describe(err));
            if (process.env.TH_DEBUG) console.error(err);
            return false;
        }
    }

    /** Print the summary line and set the exit code. */
    finish() {
        console.log(`${this.label}: ${this.passed} passed, ${this.failed} failed`);
        process.exitCode = this.failed ? 1 : 0;
    }
}

export function target() {
    const url = process.env.TH_URL;
    const auth = process.env.TH_AUTH;
    if (!url || !auth) {
        console.error('TH_URL and TH_AUTH must be set (see tests/interop/lib.sh th_start_example)');
        process.exit(2);
    }
    return { url, auth };
}

export function texts(result) {
    return (result.content ?? []).filter(c => c.type === 'text').map(c => c.text);
}

function jsonEqual(text, value) {
    try {
        return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
    } catch {
        return false;
    }
}

/** A raw request of the given era (no SDK in the way), for the HTTP-level auth checks. */
export async function rawPost(url, authorization, era) {
    const body =
        era === 'stateless'
            ? {
                  jsonrpc: '2.0',
                  id: 1,
                  method: 'server/discover',
                  params: {
                      _meta: {
                          'io.modelcontextprotocol/protocolVersion': MODERN,
                          'io.modelcontextprotocol/clientInfo': { name: 'interop-raw', version: '0' },
                          'io.modelcontextprotocol/clientCapabilities': {}
                      }
                  }
              }
            : {
                  jsonrpc: '2.0',
                  id: 1,
                  method: 'initialize',
                  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'interop-raw', version: '0' } }
              };
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    if (era === 'stateless') Object.assign(headers, { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' });
    if (authorization !== null) headers.authorization = authorization;
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '', text };
}

export function expect401(res) {
    expect(res.status === 401, `HTTP ${res.status} (want 401); body ${JSON.stringify(res.text.slice(0, 200))}`);
    expect(res.challenge.split(' ')[0].toLowerCase() === 'bearer', `WWW-Authenticate is ${JSON.stringify(res.challenge)} (want a Bearer challenge)`);
    return `401, WWW-Authenticate: ${res.challenge}`;
}

/**
 * The tool flows every client runs once connected. `callWithProgress(params, onprogress)`
 * calls a tool with a progress handler in the SDK's own spelling; `handshakeEra` says the
 * session speaks an `initialize`-era revision.
 */
export async function toolChecks(checks, client, callWithProgress, handshakeEra) {
    await checks.run('list-tools', async () => {
        const { tools } = await client.listTools();
        const names = tools.map(t => t.name).sort();
        const missing = EXPECTED_TOOLS.filter(n => !names.includes(n));
        expect(missing.length === 0, `tools ${JSON.stringify(names)} lack ${JSON.stringify(missing)}`);
        for (const t of tools) expect(t.inputSchema?.type === 'object', `${t.name}: inputSchema type is not object`);
        return names.join(', ');
    });

    await checks.run('call-echo', async () => {
        const text = 'héllo, interop ✓';
        const result = await client.callTool({ name: 'echo', arguments: { text } });
        expect(result.isError !== true, `isError true: ${JSON.stringify(texts(result))}`);
        expect(JSON.stringify(texts(result)) === JSON.stringify([text]), `content ${JSON.stringify(texts(result))} (want ${JSON.stringify([text])})`);
    });

    await checks.run('call-add', async () => {
        const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3.5 } });
        expect(result.isError !== true, `isError true: ${JSON.stringify(texts(result))}`);
        const sc = result.structuredContent;
        expect(sc && typeof sc.sum === 'number', `structuredContent ${JSON.stringify(sc)}`);
        expect(Math.abs(sc.sum - 5.5) < 1e-9, `structuredContent.sum is ${sc.sum} (want 5.5)`);
        expect(texts(result).some(t => jsonEqual(t, sc)), `no text block holding the JSON ${JSON.stringify(sc)}: ${JSON.stringify(texts(result))}`);
    });

    await checks.run('call-transfer-ok', async () => {
        const result = await client.callTool({ name: 'transfer', arguments: { amount: 7 } });
        expect(result.isError !== true, `isError true: ${JSON.stringify(texts(result))}`);
        expect(texts(result).some(t => t.includes('transferred 7')), `content ${JSON.stringify(texts(result))}`);
    });

    await checks.run('call-transfer-declined', async () => {
        const result = await client.callTool({ name: 'transfer', arguments: { amount: 500 } });
        expect(result.isError === true, `isError is ${result.isError} (want true); content ${JSON.stringify(texts(result))}`);
        expect(texts(result).some(t => t.includes('limit')), `no reason text mentioning the limit: ${JSON.stringify(texts(result))}`);
        expect(result.structuredContent?.code === 'over_limit', `structuredContent ${JSON.stringify(result.structuredContent)}`);
    });

    const count = async reconnect => {
        const seen = [];
        const result = await callWithProgress(
            { name: 'count', arguments: { to: 4, reconnect } },
            p => seen.push(p.progress),
        );
        expect(result.isError !== true, `isError true: ${JSON.stringify(texts(result))}`);
        // The host closes the stream only where it can be resumed: the handshake era.
        const closed = reconnect && handshakeEra;
        const want = closed ? 'counted to 4; the stream was closed after step 1' : 'counted to 4';
        expect(JSON.stringify(texts(result)) === JSON.stringify([want]), `content ${JSON.stringify(texts(result))} (want ${JSON.stringify([want])})`);
        expect(JSON.stringify(seen) === '[1,2,3,4]', `progress callbacks ${JSON.stringify(seen)} (want [1,2,3,4])`);
        return `progress ${JSON.stringify(seen)}${closed ? ', resumed after the host closed the stream' : ''}`;
    };
    await checks.run('call-count-progress', () => count(false));
    // In the handshake era the host closes the response stream after step 1; the SDK
    // must resume it with Last-Event-ID to see steps 2-4 and the result.
    await checks.run('call-count-reconnect', () => count(true));
}

/** Raw HTTP 401 checks (status and challenge), independent of any SDK. */
export async function rawAuthChecks(checks, url, era) {
    await checks.run('http-401-without-authorization', async () => expect401(await rawPost(url, null, era)));
    await checks.run('http-401-with-unknown-bearer', async () => expect401(await rawPost(url, `Bearer ${'0'.repeat(64)}`, era)));
}
