// Interop test: the v1 official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2,
// initialize era only: it offers 2025-11-25) against a toolhost server.
//
// Usage: TH_URL=… TH_AUTH='Bearer …' node sdk_client_test.mjs [legacy]
// Last line: `ts-sdk legacy: N passed, M failed`; exit status nonzero on any failure.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

import { Checks, expect, rawAuthChecks, target, toolChecks } from './checks.mjs';

const mode = process.argv[2] ?? 'legacy';
if (mode !== 'legacy') {
    console.error(`ts-sdk (v1) speaks only the initialize era: mode must be 'legacy', got '${mode}'`);
    process.exit(2);
}
const { url, auth } = target();
const checks = new Checks(`ts-sdk ${mode}`);
const clientInfo = { name: 'toolhost-interop-ts-sdk', version: '0.0.0' };

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: auth } } });
const client = new Client(clientInfo);

const connected = await checks.run('connect', async () => {
    await client.connect(transport);
    const version = transport.protocolVersion;
    expect(SUPPORTED_PROTOCOL_VERSIONS.includes(version) && version !== '2024-10-07', `negotiated ${JSON.stringify(version)}`);
    expect(client.getServerVersion()?.name, 'no serverInfo.name');
    expect(client.getServerCapabilities()?.tools !== undefined, 'server capabilities declare no tools');
    expect(transport.sessionId, 'no Mcp-Session-Id issued');
    return `protocol ${version}`;
});

if (connected) {
    await toolChecks(checks, client, (params, onprogress) => client.callTool(params, undefined, { onprogress }), true);
    await checks.run('terminate-session', async () => {
        // DELETE with the session id; the SDK accepts 2xx and 405 (termination unsupported).
        await transport.terminateSession();
    });
} else {
    for (const name of ['list-tools', 'call-echo', 'call-add', 'call-transfer-ok', 'call-transfer-declined', 'terminate-session']) {
        checks.fail(name, 'not connected');
    }
}
await client.close().catch(() => {});

await rawAuthChecks(checks, url, 'legacy');

await checks.run('sdk-401-without-authorization', async () => {
    const bare = new Client(clientInfo);
    try {
        await bare.connect(new StreamableHTTPClientTransport(new URL(url)));
    } catch (err) {
        // Without an auth provider the transport reports the HTTP status as the error code.
        expect(err?.code === 401, `connect failed, but not with 401: ${err?.name}: ${err?.message} (code ${err?.code})`);
        return `${err.constructor?.name ?? err.name} code ${err.code}`;
    } finally {
        await bare.close().catch(() => {});
    }
    expect(false, 'the SDK client connected without the Authorization header');
});

checks.finish();
