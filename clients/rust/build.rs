//! Generates the protobuf messages and the RefereeService client from the repository's
//! `proto/tavolo/v1/referee.proto`, with the protoc that the `protoc-bin-vendored` crate
//! ships (no system protoc needed, nothing downloaded besides crates).

use std::path::Path;

const PROTO_ROOT: &str = "../../proto";
const PROTO_FILE: &str = "../../proto/tavolo/v1/referee.proto";

fn main() {
    // Without these cargo would rerun this script whenever any file of the package changes.
    println!("cargo:rerun-if-changed={PROTO_FILE}");
    println!("cargo:rerun-if-changed=build.rs");
    if !Path::new(PROTO_FILE).is_file() {
        panic!(
            "{PROTO_FILE} not found: build this crate inside the Tavolo repository (clients/rust)"
        );
    }
    let protoc = protoc_bin_vendored::protoc_bin_path()
        .unwrap_or_else(|e| panic!("protoc-bin-vendored has no protoc for this platform: {e}"));
    // SAFETY: build scripts are single-threaded at this point; prost-build reads PROTOC.
    unsafe { std::env::set_var("PROTOC", protoc) };
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .compile_protos(&[PROTO_FILE], &[PROTO_ROOT])
        .unwrap_or_else(|e| panic!("compiling {PROTO_FILE}: {e}"));
}
