// Interop test: the v1 official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2,
// initialize era: it offers 2025-11-25) against examples/gateway bridging the official
// server-everything (stdio) and the official Python SDK server (HTTP).
//
// Usage: node gateway_client_test.mjs [legacy]   (started by tests/interop/gateway/run.sh)
// Environment: TH_URL and TH_AUTH (the gateway), TH_BRIDGED (the bridged servers to check,
// of "py everything"), TH_PY_URL, TH_PY_AUTH and TH_PY_PID (the Python SDK server, called
// directly for comparison, then killed by this test), TH_EVERYTHING_PID (server-everything,
// the gateway's child, killed by this test), TH_GATEWAY_PID (its parent), TH_GATEWAY_LOG
// (the gateway's stderr, where its event hook writes) and TH_EVERYTHING_WIRE (what
// server-everything read from stdin).
//
// The checks are the ones tests/interop/python/gateway_client_test.py runs, in the same
// order and with the same names. Last line: `gateway-ts legacy: N passed, M failed`; exit
// status nonzero on any failure.

import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { connect as tcpConnect } from 'node:net';
import { isDeepStrictEqual } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { CheckFailed, Checks, expect, target, texts } from './checks.mjs';

const LOCAL_TOOLS = ['echo', 'add'];
const PY_TOOLS = ['echo', 'add', 'count', 'count_reconnect', 'fail', 'wait', 'cancelled_waits', 'ping_on_call', 'ping_alone', 'toggle_tool'].map(n => `py_${n}`).sort();
// server-everything 2026.8.31's tools, under the gateway's qualified names.
const EVERYTHING_TOOLS = [
    // what server-everything always lists
    'echo',
    'get-annotated-message',
    'get-env',
    'get-resource-links',
    'get-resource-reference',
    'get-structured-content',
    'get-sum',
    'get-tiny-image',
    'gzip-file-as-resource',
    'toggle-simulated-logging',
    'toggle-subscriber-updates',
    'trigger-long-running-operation',
    // what it lists for a client that declares roots, elicitation and sampling, as the
    // gateway's bridge does (it declares no tasks, nor URL elicitation)
    'get-roots-list',
    'trigger-elicitation-request',
    'trigger-sampling-request',
    'simulate-research-query',
]
    .map(n => `everything_${n}`)
    .sort();
// What server-everything writes to stderr as it starts; the gateway's hook logs it.
const EVERYTHING_STARTED = 'MCP server "everything" wrote to stderr: Starting default (STDIO) server...';
const unavailable = server =>
    `The MCP server "${server}" that provides this tool is unavailable or failed, so the call did not complete. ` +
    'The other tools still work; try this one again later.';
// How long a relayed cancellation may take to reach the remote server.
const CANCEL_WITHIN_MS = 10_000;

const mode = process.argv[2] ?? 'legacy';
if (mode !== 'legacy') {
    console.error(`ts-sdk (v1) speaks only the initialize era: mode must be 'legacy', got '${mode}'`);
    process.exit(2);
}
const { url, auth } = target();
for (const name of ['TH_PY_URL', 'TH_PY_AUTH', 'TH_PY_PID', 'TH_GATEWAY_LOG']) {
    if (!process.env[name]) {
        console.error(`${name} must be set (see tests/interop/gateway/run.sh)`);
        process.exit(2);
    }
}
const bridged = new Set((process.env.TH_BRIDGED ?? 'py everything').split(/\s+/).filter(Boolean));
const checks = new Checks(`gateway-ts ${mode}`);
const clientInfo = { name: 'toolhost-interop-gateway-ts', version: '0.0.0' };
// Deep equality that ignores the order of an object's keys (JSON's objects have none).
const same = isDeepStrictEqual;
const show = JSON.stringify;
const gatewayLog = () => readFileSync(process.env.TH_GATEWAY_LOG, 'utf8');
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function connected(to, authorization) {
    const client = new Client(clientInfo);
    await client.connect(new StreamableHTTPClientTransport(new URL(to), { requestInit: { headers: { Authorization: authorization } } }));
    return client;
}

/** The JSON-RPC messages server-everything read from stdin so far (recorded by
 * tests/interop/gateway/wire_tap.cjs), a line still being written left out. */
function wireMessages() {
    const messages = [];
    for (const line of readFileSync(process.env.TH_EVERYTHING_WIRE, 'utf8').split('\n')) {
        try {
            messages.push(JSON.parse(line));
        } catch {
            // an empty or partly written line
        }
    }
    return messages;
}

/** The tools/call requests for `name` that server-everything read. */
const wireToolCalls = name => wireMessages().filter(m => m.method === 'tools/call' && m.params?.name === name);

/** The process ids whose parent is `pid`. */
const children = pid =>
    execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);

/** Polls `probe` until it is true; the milliseconds it took, or fails naming `what`. */
async function waitUntil(probe, withinMs, what) {
    const start = Date.now();
    for (;;) {
        if (await probe()) return Date.now() - start;
        if (Date.now() - start > withinMs) throw new CheckFailed(`${what}: not within ${withinMs / 1000}s`);
        await sleep(50);
    }
}

function refusesConnections(to) {
    const { hostname, port } = new URL(to);
    return new Promise(resolve => {
        const socket = tcpConnect({ host: hostname, port: Number(port) });
        socket.once('connect', () => {
            socket.destroy();
            resolve(false);
        });
        socket.once('error', err => resolve(err.code === 'ECONNREFUSED'));
    });
}

/** What a bridge must pass through: content, structured content, isError and the tool's
 * own `_meta`. The `io.modelcontextprotocol/` keys describe the hop (each server names
 * itself there), so they are left out. */
function relayedPart(result) {
    const meta = Object.fromEntries(Object.entries(result._meta ?? {}).filter(([k]) => !k.startsWith('io.modelcontextprotocol/')));
    return { content: result.content, structuredContent: result.structuredContent ?? null, isError: result.isError ?? false, _meta: meta };
}

/** Calls `name`, aborts the call after its first progress event, and returns the progress
 * seen; fails unless the call ended aborted (no result). */
async function callAndCancel(client, name, args) {
    const controller = new AbortController();
    const progress = [];
    let started;
    const firstProgress = new Promise(resolve => (started = resolve));
    const call = client.callTool({ name, arguments: args }, undefined, {
        signal: controller.signal,
        onprogress: p => {
            progress.push(p.progress);
            started();
        },
    });
    const settled = call.then(
        result => ({ result }),
        error => ({ error }),
    );
    await Promise.race([firstProgress, settled]);
    controller.abort();
    const { result, error } = await settled;
    expect(result === undefined, `the call returned ${show(result)} although it was cancelled`);
    expect(progress.length > 0, `the call ended before its first progress event: ${error}`);
    expect(error?.name === 'AbortError' || controller.signal.aborted, `the call failed otherwise: ${error}`);
    return progress;
}

/** Calls `name`, kills process `pid` after the call's first progress event, and returns
 * the call's result. */
async function callAndKill(client, name, args, pid) {
    let started;
    const firstProgress = new Promise(resolve => (started = resolve));
    const call = client.callTool({ name, arguments: args }, undefined, { onprogress: () => started() });
    await Promise.race([firstProgress, call]);
    process.kill(pid, 'SIGKILL');
    return await call;
}

async function sessionChecks(client) {
    const text = 'héllo, gateway ✓';

    await checks.run('list-tools', async () => {
        const { tools } = await client.listTools();
        const byName = Object.fromEntries(tools.map(t => [t.name, t]));
        const names = Object.keys(byName);
        const missing = LOCAL_TOOLS.filter(n => !names.includes(n));
        expect(missing.length === 0, `local tools missing: ${show(missing)}`);
        const py = names.filter(n => n.startsWith('py_')).sort();
        const everything = names.filter(n => n.startsWith('everything_')).sort();
        const strays = names.filter(n => !LOCAL_TOOLS.includes(n) && !py.includes(n) && !everything.includes(n));
        expect(strays.length === 0, `tools neither local nor qualified: ${show(strays)}`);
        if (bridged.has('py')) {
            expect(same(py, PY_TOOLS), `py_* tools ${show(py)} (want ${show(PY_TOOLS)})`);
            expect(byName.py_add.outputSchema?.properties?.sum !== undefined, `py_add's outputSchema ${show(byName.py_add.outputSchema)}`);
        } else {
            expect(py.length === 0, `py_* tools listed although py is not bridged: ${show(py)}`);
        }
        if (bridged.has('everything')) {
            expect(same(everything, EVERYTHING_TOOLS), `everything_* tools ${show(everything)} (want ${show(EVERYTHING_TOOLS)})`);
            const schema = byName['everything_get-structured-content'].outputSchema ?? {};
            expect(
                same(Object.keys(schema.properties ?? {}).sort(), ['conditions', 'humidity', 'temperature']),
                `everything_get-structured-content's outputSchema ${show(schema)}`,
            );
        } else {
            expect(everything.length === 0, `everything_* tools listed although everything is not bridged: ${show(everything)}`);
        }
        return `${names.length} tools: ${LOCAL_TOOLS.length} local, ${py.length} py_*, ${everything.length} everything_*`;
    });

    await checks.run('call-local', async () => {
        const echoed = await client.callTool({ name: 'echo', arguments: { text } });
        expect(echoed.isError !== true && same(texts(echoed), [text]), `echo: ${show(echoed)}`);
        const added = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
        expect(added.isError !== true && same(added.structuredContent, { sum: 5 }), `add: ${show(added)}`);
    });

    if (bridged.has('py')) {
        await checks.run('call-py', async () => {
            const echoed = await client.callTool({ name: 'py_echo', arguments: { text } });
            expect(echoed.isError !== true && same(texts(echoed), [text]), `py_echo: ${show(echoed)}`);
            const added = await client.callTool({ name: 'py_add', arguments: { a: 2, b: 3.5 } });
            expect(added.isError !== true && same(added.structuredContent, { sum: 5.5 }), `py_add: ${show(added)}`);
            const failed = await client.callTool({ name: 'py_fail', arguments: { why: 'no such invoice' } });
            expect(failed.isError === true, `py_fail isError is ${failed.isError}`);
            const want = 'Error executing tool fail: no such invoice';
            expect(same(texts(failed), [want]), `py_fail content ${show(texts(failed))}`);
            // Unchanged: the same calls made straight to the Python server give the same results.
            const py = await connected(process.env.TH_PY_URL, process.env.TH_PY_AUTH);
            try {
                for (const [name, args, through] of [
                    ['add', { a: 2, b: 3.5 }, added],
                    ['fail', { why: 'no such invoice' }, failed],
                ]) {
                    const direct = await py.callTool({ name, arguments: args });
                    expect(
                        same(relayedPart(through), relayedPart(direct)),
                        `py_${name} through the gateway ${show(relayedPart(through))} != direct ${show(relayedPart(direct))}`,
                    );
                    // The hop's own keys name the server the client talks to, if any.
                    const named = through._meta?.['io.modelcontextprotocol/serverInfo'];
                    expect(named === undefined || named.name === 'gateway', `py_${name}'s result names ${show(named)}`);
                }
            } finally {
                await py.close().catch(() => {});
            }
        });
    }

    if (bridged.has('everything')) {
        await checks.run('call-everything', async () => {
            const echoed = await client.callTool({ name: 'everything_echo', arguments: { message: text } });
            expect(echoed.isError !== true && same(texts(echoed), [`Echo: ${text}`]), `everything_echo: ${show(echoed)}`);
            const summed = await client.callTool({ name: 'everything_get-sum', arguments: { a: 2, b: 3.5 } });
            expect(summed.isError !== true && same(texts(summed), ['The sum of 2 and 3.5 is 5.5.']), `everything_get-sum: ${show(summed)}`);
            const forwarded = wireToolCalls('get-sum').map(m => m.params.arguments);
            expect(same(forwarded, [{ a: 2, b: 3.5 }]), `server-everything read get-sum's arguments as ${show(forwarded)}`);
            const weather = await client.callTool({ name: 'everything_get-structured-content', arguments: { location: 'Chicago' } });
            const wantSc = { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 };
            expect(weather.isError !== true && same(weather.structuredContent, wantSc), `structuredContent ${show(weather.structuredContent)}`);
            expect(same(texts(weather).map(t => JSON.parse(t)), [wantSc]), `content ${show(texts(weather))}`);
            const ref = await client.callTool({ name: 'everything_get-resource-reference', arguments: { resourceType: 'Text', resourceId: 2 } });
            const kinds = ref.content.map(c => c.type);
            expect(ref.isError !== true && same(kinds, ['text', 'resource', 'text']), `content types ${show(kinds)}`);
            const { resource } = ref.content[1];
            expect(resource.uri === 'demo://resource/dynamic/text/2', `embedded resource uri ${resource.uri}`);
            expect(resource.text.startsWith('Resource 2: This is a plaintext resource'), `resource text ${show(resource.text)}`);
            const bad = await client.callTool({ name: 'everything_get-resource-reference', arguments: { resourceType: 'Text', resourceId: 0 } });
            expect(bad.isError === true, `resourceId 0: isError is ${bad.isError}`);
            const want = 'Invalid resourceId: 0. Must be a finite positive integer.';
            expect(same(texts(bad), [want]), `resourceId 0: content ${show(texts(bad))}`);
        });
    }

    if (bridged.has('py')) {
        await checks.run('progress-py', async () => {
            const seen = [];
            const result = await client.callTool({ name: 'py_count', arguments: { steps: 3 } }, undefined, { onprogress: p => seen.push(p.progress) });
            expect(same(texts(result), ['counted 3']), `content ${show(texts(result))}`);
            expect(same(seen, [1, 2, 3]), `progress ${show(seen)} (want [1,2,3])`);
            return `progress ${show(seen)}`;
        });
    }

    if (bridged.has('everything')) {
        await checks.run('progress-everything', async () => {
            const seen = [];
            const result = await client.callTool(
                { name: 'everything_trigger-long-running-operation', arguments: { duration: 0.4, steps: 4 } },
                undefined,
                { onprogress: p => seen.push([p.progress, p.total]) },
            );
            const want = 'Long running operation completed. Duration: 0.4 seconds, Steps: 4.';
            expect(same(texts(result), [want]), `content ${show(texts(result))}`);
            expect(same(seen, [[1, 4], [2, 4], [3, 4], [4, 4]]), `progress ${show(seen)} (want 1..4 of 4)`);
            return `progress ${show(seen.map(([p]) => p))} of 4`;
        });
    }

    if (bridged.has('py')) {
        await checks.run('cancel-py', async () => {
            const tag = `ts-${mode}-${process.pid}`;
            const before = await client.callTool({ name: 'py_cancelled_waits', arguments: {} });
            expect(same(before.structuredContent, { tags: [] }), `cancelled waits before any cancel: ${show(before.structuredContent)}`);
            await callAndCancel(client, 'py_wait', { tag, seconds: 60 });
            const took = await waitUntil(
                async () => same((await client.callTool({ name: 'py_cancelled_waits', arguments: {} })).structuredContent, { tags: [tag] }),
                CANCEL_WITHIN_MS,
                `the Python server never recorded the cancelled wait ${show(tag)}`,
            );
            return `the Python server saw the cancel after ${(took / 1000).toFixed(1)}s`;
        });
    }

    if (bridged.has('everything')) {
        await checks.run('cancel-everything', async () => {
            const args = { duration: 30, steps: 30 };
            await callAndCancel(client, 'everything_trigger-long-running-operation', args);
            const calls = wireToolCalls('trigger-long-running-operation')
                .filter(m => same(m.params.arguments, args))
                .map(m => m.id);
            expect(calls.length === 1, `server-everything read ${calls.length} such tools/call (want 1)`);
            const took = await waitUntil(
                async () => wireMessages().some(m => m.method === 'notifications/cancelled' && m.params?.requestId === calls[0]),
                CANCEL_WITHIN_MS,
                `server-everything never read a notifications/cancelled for request ${calls[0]}`,
            );
            return `server-everything read notifications/cancelled for request ${calls[0]} after ${(took / 1000).toFixed(1)}s`;
        });
    }

    if (bridged.has('py')) {
        await checks.run('kill-py', async () => {
            // Killed in the middle of a call: that call, and every later py_* call, ends
            // in a clear tool error.
            const cut = await callAndKill(client, 'py_wait', { tag: 'killed', seconds: 60 }, Number(process.env.TH_PY_PID));
            expect(cut.isError === true, `the call cut by the kill: isError is ${cut.isError}`);
            expect(same(texts(cut), [unavailable('py')]), `the call cut by the kill: ${show(texts(cut))}`);
            await waitUntil(() => refusesConnections(process.env.TH_PY_URL), 5_000, 'the killed Python server still accepts connections');
            // The layer finds it gone, cannot connect it again, and takes its tools off
            // the list (README, "the gateway": at most 1 s of grace).
            await waitUntil(
                async () => !(await client.listTools()).tools.some(t => t.name.startsWith('py_')),
                10_000,
                "the killed server's tools are still listed",
            );
            const dead = await client.callTool({ name: 'py_echo', arguments: { text } });
            expect(dead.isError === true, `py_echo after the kill: isError is ${dead.isError}`);
            expect(texts(dead)[0]?.startsWith('Unknown tool: "py_echo" is not available'), `py_echo after the kill: ${show(texts(dead))}`);
            expect(gatewayLog().includes('MCP server "py" is gone'), "the gateway's hook heard nothing of the death");
            const echoed = await client.callTool({ name: 'echo', arguments: { text } });
            expect(echoed.isError !== true && same(texts(echoed), [text]), `echo after the kill: ${show(echoed)}`);
            if (bridged.has('everything')) {
                const again = await client.callTool({ name: 'everything_echo', arguments: { message: text } });
                expect(same(texts(again), [`Echo: ${text}`]), `everything_echo after the kill: ${show(again)}`);
            }
            return 'the cut call failed clearly, py_* left the list, the rest still serves';
        });
    }

    if (bridged.has('everything')) {
        await checks.run('kill-everything', async () => {
            // Killed in the middle of a call: that call ends in a clear tool error, and
            // the next everything_* call starts server-everything again.
            const gateway = Number(process.env.TH_GATEWAY_PID);
            const first = Number(process.env.TH_EVERYTHING_PID);
            expect(same(children(gateway), [first]), `the gateway's children are ${show(children(gateway))} (want [${first}])`);
            const cut = await callAndKill(client, 'everything_trigger-long-running-operation', { duration: 30, steps: 30 }, first);
            expect(cut.isError === true, `the call cut by the kill: isError is ${cut.isError}`);
            expect(same(texts(cut), [unavailable('everything')]), `the call cut by the kill: ${show(texts(cut))}`);
            const detail = 'MCP server "everything": tools/call of "trigger-long-running-operation" failed';
            expect(gatewayLog().includes(detail), "the gateway's hook heard no detail");
            const echoed = await client.callTool({ name: 'everything_echo', arguments: { message: text } });
            expect(echoed.isError !== true && same(texts(echoed), [`Echo: ${text}`]), `everything_echo after the kill: ${show(echoed)}`);
            const starts = () => gatewayLog().split(EVERYTHING_STARTED).length - 1;
            await waitUntil(
                async () => {
                    // The new child's stderr reaches the gateway's log on a thread of its own.
                    const now = children(gateway);
                    return now.length === 1 && now[0] !== first && starts() === 2;
                },
                5_000,
                'no new server-everything (want one child of the gateway, not the killed one, and a second start in its log)',
            );
            const local = await client.callTool({ name: 'echo', arguments: { text } });
            expect(local.isError !== true && same(texts(local), [text]), `echo after the kill: ${show(local)}`);
            return `pid ${first} killed mid-call, pid ${children(gateway)[0]} serves the next call`;
        });
    }
}

const client = new Client(clientInfo);
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: auth } } });
const up = await checks.run('connect', async () => {
    await client.connect(transport);
    const version = transport.protocolVersion;
    expect(version !== '2026-07-28', `negotiated ${show(version)} (want a handshake-era revision)`);
    expect(client.getServerVersion()?.name === 'gateway', `serverInfo ${show(client.getServerVersion())}`);
    return `protocol ${version}`;
});
if (up) await sessionChecks(client);
else checks.fail('session', 'not connected');
await client.close().catch(() => {});
checks.finish();
