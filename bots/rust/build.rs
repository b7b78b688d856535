// Generates the protocol code from proto/dominoes/v1/{bot,types}.proto at build time, into OUT_DIR (src/main.rs
// includes it with tonic::include_proto!). protox compiles the .proto files in Rust: no protoc binary is needed.
// A copy of the generated file goes to gen/dominoes.v1.rs (ignored by git), only for reading: the types and
// fields a policy can use.
use std::{env, fs, path::PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    let proto_root = manifest.join("../../proto");
    // bot.proto imports types.proto; both are in package dominoes.v1, so they make one file, dominoes.v1.rs.
    let protos = ["dominoes/v1/bot.proto", "dominoes/v1/types.proto"];
    for proto in protos {
        println!("cargo:rerun-if-changed={}", proto_root.join(proto).display());
    }
    let descriptors = protox::compile(protos, [&proto_root])?;
    tonic_prost_build::configure()
        .build_client(false) // the arena is the client; a bot only serves
        .compile_fds(descriptors)?;

    let generated = PathBuf::from(env::var("OUT_DIR")?).join("dominoes.v1.rs");
    let gen_dir = manifest.join("gen");
    let copied =
        fs::create_dir_all(&gen_dir).and_then(|()| fs::copy(&generated, gen_dir.join("dominoes.v1.rs")));
    if let Err(e) = copied {
        println!("cargo:warning=could not copy the generated code to {}: {e}", gen_dir.display());
    }
    Ok(())
}
