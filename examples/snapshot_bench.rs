//! The snapshot copy against `cp -a` (bench/snapshot.sh runs it): `take <src> <dst>` prints the
//! copy's seconds. An example, so nothing of it ships.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 4 || a[1] != "take" {
        eprintln!("usage: snapshot_bench take <src> <dst>");
        std::process::exit(2);
    }
    let t = std::time::Instant::now();
    let s = monky_deployd::host::snapshot::take(
        std::path::Path::new(&a[2]),
        std::path::Path::new(&a[3]),
        &mut |_| {},
    )
    .expect("take");
    println!("{:.3} {} {}", t.elapsed().as_secs_f64(), s.files, s.bytes);
}
