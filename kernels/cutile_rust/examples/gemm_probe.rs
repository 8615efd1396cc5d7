// Temporary probe: compile one gemm kernel and assemble it.
use cutile::compile_api::KernelCompiler;
use cutile::cutile_compiler::hints::CompileOptions;
use portbench_cutile_rust::export;
use portbench_cutile_rust::gemm::portbench_gemm;
use portbench_cutile_rust::plan::TensorLayout;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let kernel = args[1].clone();
    let generics: Vec<String> = args[2].split(',').map(String::from).collect();
    let occ: i32 = args[3].parse()?;
    let ctas: i32 = args[4].parse()?;
    let out = std::path::PathBuf::from(&args[5]);
    // tensors: name:dims:bytes;...  dims as 4096x4096, strides contiguous
    let tensors: Vec<TensorLayout> = if args[6].is_empty() { vec![] } else { args[6]
        .split(';')
        .map(|t| {
            let f: Vec<&str> = t.split(':').collect();
            let shape: Vec<i64> = f[1].split('x').map(|v| v.parse().unwrap()).collect();
            TensorLayout::contiguous(f[0], &shape, f[2].parse().unwrap())
        })
        .collect() };
    let tc = export::Toolchain::new(&export::find_tileiras()?)?;
    export::run_with_stack(move || -> anyhow::Result<()> {
        let strides: Vec<(String, Vec<i32>)> = tensors.iter().map(|t| (t.name.clone(), t.static_strides())).collect();
        let sr: Vec<(&str, &[i32])> = strides.iter().map(|(n, s)| (n.as_str(), s.as_slice())).collect();
        let specs: Vec<(String, _)> = tensors.iter().map(|t| (t.name.clone(), t.spec())).collect();
        let spr: Vec<(&str, _)> = specs.iter().map(|(n, s)| (n.as_str(), s.clone())).collect();
        let mut o = CompileOptions::default();
        if occ > 0 { o = o.occupancy(occ); }
        if ctas > 0 { o = o.num_cta_in_cga(ctas); }
        let art = KernelCompiler::new(portbench_gemm::__module_ast_self, "portbench_gemm", &kernel)
            .options(o).generics(generics).strides(&sr).spec_args(&spr).target("sm_90")
            .bytecode_version(tc.bytecode).compile()
            .map_err(|e| anyhow::anyhow!("compile: {e}"))?;
        std::fs::write(out.with_extension("tileir.txt"), art.ir_text())?;
        let bc = art.bytecode().map_err(|e| anyhow::anyhow!("{e}"))?;
        std::fs::write(out.with_extension("bc"), &bc)?;
        tc.assemble(&out.with_extension("bc"), &out.with_extension("cubin"), "sm_90")?;
        println!("checks: {:?}", art.launch_checks());
        Ok(())
    })
}
