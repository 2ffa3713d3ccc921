use std::time::Duration;
use traceopt_ir::read_log;
use traceopt_smt::Solver;
use traceopt_verify::verify;

fn one(body: &str) -> traceopt_ir::Trace {
    let text = format!("[1a] {{jit-log-noopt\n# x\n{body}[1b] jit-log-noopt}}\n");
    let log = read_log(&text, "t.log");
    let t = log.traces().next().unwrap().trace.clone();
    t
}

#[test]
fn scratch() {
    let b = "[i0]\np1 = new_with_vtable(descr=<SizeDescr 16>)\np2 = new_with_vtable(descr=<SizeDescr 16>)\n\
guard_class(p1, ConstClass(W_IntObject))\nguard_class(p2, ConstClass(W_FloatObject))\nfinish(i0)\n";
    let a = b.replace("finish(i0)", "i3 = int_add(i0, 1)\nfinish(i3)");
    let mut s = Solver::start(None, Duration::from_secs(20)).unwrap();
    let v = verify(&one(b), &one(&a), &mut s).unwrap();
    panic!("{v:?}");
}
