/*
 * bcryptprimitives.dll for Wine 8, which lacks ProcessPrng: the one
 * function Rust's std (for HashMap keys) and getrandom import from it on
 * Windows 10 and later. Without it no Rust program starts under Wine.
 * Windows itself has the real DLL; this shim is for CI only, built there
 * from this source (.ci/run) and copied beside each test executable, where
 * the loader looks first.
 *
 * The bytes come from RtlGenRandom (exported by advapi32 as
 * SystemFunction036), Wine's own cryptographic random source.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* Windows documents ProcessPrng as always returning TRUE; a failure of
 * the source is reported all the same rather than handing out zeros. */
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        /* RtlGenRandom takes a ULONG length; SIZE_T is wider on x64. */
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
