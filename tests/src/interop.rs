//! What the interop runners hand the ignored tests: the address of a
//! server nobody here wrote.

/// The official Python SDK server's URL and authorization, exported by
/// `bash tests/interop/python_server/run.sh` as `TH_PY_URL` and
/// `TH_PY_AUTH`; panics naming the runner when they are unset.
pub fn python_sdk_server() -> (String, String) {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!("{name} is unset: run these through bash tests/interop/python_server/run.sh")
        })
    };
    (var("TH_PY_URL"), var("TH_PY_AUTH"))
}

/// The command line that starts the official Python SDK server over stdio
/// (its interpreter, `server.py` and `--stdio`), exported by `bash
/// tests/interop/python_server/run.sh` as `TH_PY_STDIO`, words separated
/// by tabs; panics naming the runner when it is unset.
pub fn python_sdk_stdio_server() -> Vec<String> {
    let line = std::env::var("TH_PY_STDIO").unwrap_or_else(|_| {
        panic!("TH_PY_STDIO is unset: run these through bash tests/interop/python_server/run.sh")
    });
    line.split('\t').map(str::to_owned).collect()
}
