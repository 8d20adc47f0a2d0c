//! Measures what a crafted compose file costs the agent's parser before it is refused: an
//! alias bomb (billion laughs) and deep nesting. Prints one Markdown table row per input with
//! wall time and the process's peak RSS. Run by scripts/bench-yaml.sh.

use std::time::Instant;

fn peak_rss_kib() -> i64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a properly sized out-parameter.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss
}

fn bomb(levels: usize) -> String {
    let mut y = String::from("x-a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..levels {
        let p = i - 1;
        y.push_str(&format!(
            "x-a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    y.push_str(&format!(
        "services:\n  s:\n    image: x\n    command: *a{}\n",
        levels - 1
    ));
    y
}

/// One input per process (peak RSS is per process): `yaml_bomb N`, or no argument for the
/// table header.
fn main() {
    let Some(which) = std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<usize>().ok())
    else {
        println!("| input | bytes | outcome | wall | peak RSS of the process |");
        println!("|---|---|---|---|---|");
        return;
    };
    let base = peak_rss_kib();
    let deep = format!(
        "services:\n  s:\n    image: x\n    command: {}1{}\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let inputs = [
        (
            "baseline: the demo bundle's compose.yaml",
            include_str!("../docs/demo-bundle/compose.yaml").to_string(),
        ),
        ("alias bomb, 9 levels (9^9 nodes if expanded)", bomb(9)),
        ("alias bomb, 5 levels (59,049 nodes)", bomb(5)),
        ("5000-deep nesting", deep),
    ];
    if let Some((name, y)) = inputs.into_iter().nth(which) {
        let t = Instant::now();
        let r = monky_deployd::boundary::compose_check::parse(y.as_bytes());
        let outcome = match r {
            Ok(_) => "accepted".to_string(),
            Err(e) => format!("{}", e).chars().take(70).collect(),
        };
        println!(
            "| {name} | {} | {outcome} | {:.1} ms | {} KiB (+{} KiB) |",
            y.len(),
            t.elapsed().as_secs_f64() * 1000.0,
            peak_rss_kib(),
            peak_rss_kib() - base
        );
    }
}
