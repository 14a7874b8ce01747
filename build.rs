//! Puts libtorch's folder on the rpath of the binary, tests and benches, so they run without
//! LD_LIBRARY_PATH (torch-sys reports the folder as `DEP_TCH_LIBTORCH_LIB`).
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    }
}
