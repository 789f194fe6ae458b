// Interop test: the v2 official TypeScript client (@modelcontextprotocol/client 2.4.0, which
// speaks 2026-07-28 as well as the initialize era) against a toolhost server.
//
// Usage: TH_URL=… TH_AUTH='Bearer …' node client_v2_test.mjs MODE
//   MODE  stateless  versionNegotiation {mode: {pin: '2026-07-28'}}: server/discover at
//                    connect must offer 2026-07-28, no fallback
//         auto       versionNegotiation {mode: 'auto'}: probe server/discover, fall back to
//                    initialize; passes only if it ends on 2026-07-28
//         legacy     the client's default (no versionNegotiation): initialize handshake
// Last line: `ts-client MODE: N passed, M failed`; exit status nonzero on any failure.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { Checks, MODERN, expect, rawAuthChecks, target, toolChecks } from './checks.mjs';

const HANDSHAKE_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const negotiation = {
    stateless: { mode: { pin: MODERN } },
    auto: { mode: 'auto' },
    legacy: undefined
};

const mode = process.argv[2];
if (!(mode in negotiation)) {
    console.error(`usage: client_v2_test.mjs stateless|auto|legacy (got ${JSON.stringify(mode)})`);
    process.exit(2);
}
const { url, auth } = target();
const checks = new Checks(`ts-client ${mode}`);
const clientInfo = { name: 'toolhost-interop-ts-client', version: '0.0.0' };
const options = negotiation[mode] ? { versionNegotiation: negotiation[mode] } : {};

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: auth } } });
const client = new Client(clientInfo, options);

const connected = await checks.run('connect', async () => {
    await client.connect(transport);
    const version = client.getNegotiatedProtocolVersion();
    const era = client.getProtocolEra();
    if (mode === 'legacy') {
        expect(era === 'legacy' && HANDSHAKE_VERSIONS.includes(version), `negotiated ${version} (${era} era)`);
        expect(client.getServerVersion()?.name, 'no serverInfo.name');
        expect(transport.sessionId, 'no Mcp-Session-Id issued');
    } else {
        // auto passes only once the server speaks the stateless revision
        expect(era === 'modern' && version === MODERN, `negotiated ${version} (${era} era), want ${MODERN}`);
    }
    expect(client.getServerCapabilities()?.tools !== undefined, 'server capabilities declare no tools');
    return `protocol ${version}, ${era} era`;
});

const names = ['list-tools', 'call-echo', 'call-add', 'call-transfer-ok', 'call-transfer-declined'];
if (mode !== 'legacy') names.unshift('discover');
if (connected || (mode === 'auto' && client.getNegotiatedProtocolVersion())) {
    // (auto that fell back to the handshake still runs the tool flows: the fallback is worth seeing work)
    if (mode !== 'legacy') {
        await checks.run('discover', async () => {
            const d = client.getDiscoverResult();
            expect(d, 'no DiscoverResult (the connect did not end on server/discover)');
            expect(d.supportedVersions?.includes(MODERN), `supportedVersions ${JSON.stringify(d.supportedVersions)}`);
            expect(d.capabilities?.tools !== undefined, 'capabilities.tools missing');
            return `supportedVersions ${JSON.stringify(d.supportedVersions)}`;
        });
    }
    await toolChecks(checks, client, (params, onprogress) => client.callTool(params, { onprogress }), mode === 'legacy');
} else {
    for (const name of names) checks.fail(name, 'not connected');
}
if (transport.sessionId) await transport.terminateSession().catch(() => {});
await client.close().catch(() => {});

await rawAuthChecks(checks, url, mode === 'legacy' ? 'legacy' : 'stateless');

await checks.run('sdk-401-without-authorization', async () => {
    const bare = new Client(clientInfo, options);
    try {
        await bare.connect(new StreamableHTTPClientTransport(new URL(url)));
    } catch (err) {
        // Without an auth provider the client raises an SdkHttpError carrying the status.
        expect(err?.data?.status === 401, `connect failed, but not with 401: ${err?.name}: ${err?.message}`);
        return `${err.name} ${err.code}, status ${err.data.status}`;
    } finally {
        await bare.close().catch(() => {});
    }
    expect(false, 'the client connected without the Authorization header');
});

checks.finish();
