//! Benchmark: what the agent's own alarms (`src/alarms.rs`) add to a poll.
//!
//! `cargo bench --bench alarms`. In process, no server: a real INFO capture
//! of Redis 7.0 (`tests/fixtures/redis/7.0-master-info.txt`, one replica),
//! with `maxmemory` set so that `redisMemUsedOfMax` is 95.6 % (the memory
//! alarm raised and kept, its row rebuilt at every poll), is judged as the
//! hub does after each poll. The baseline, measured in the same run, is
//! what turning that INFO text into the poll's parts costs the agent
//! (`Info::parse`, `instance_part`, `status_part`, sorted): the work every
//! poll does already. Ratios are alarms / baseline; printed per poll:
//! - the four default alarms,
//! - 64 alarms (the defaults and 60 more on gauges of the part).
//!
//! `BENCH_ROUNDS` sets the polls per phase (default 20000).

use redis_snmp::alarms::{AlarmSpec, Alarms, Direction};
use redis_snmp::metrics::{self, Layout};
use redis_snmp::oid::Oid;
use redis_snmp::redis::info::Info;
use redis_snmp::redis::readings::{instance_part, status_part, Extras, InstanceStatus};
use redis_snmp::smi::{Syntax, Value};
use std::hint::black_box;
use std::time::Instant;

fn rounds() -> u32 {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

/// The parts of one poll of instance 1, sorted as the store keeps them.
fn parts(text: &str, layout: &Layout) -> Vec<Vec<(Oid, Value)>> {
    let info = Info::parse(text);
    let status = InstanceStatus {
        name: "main".into(),
        address: "127.0.0.1:6379".into(),
        up: true,
        last_ok_unix: Some(1_795_400_000),
        ..Default::default()
    };
    let mut instance = instance_part(1, "main", &info, layout, &Extras::default());
    let mut status = status_part(1, &status, layout);
    instance.sort_by(|a, b| a.0.cmp(&b.0));
    status.sort_by(|a, b| a.0.cmp(&b.0));
    vec![instance, status]
}

/// Nanoseconds per call of `f` over `n` calls.
fn per_call(n: u32, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_nanos() as f64 / f64::from(n)
}

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/redis/7.0-master-info.txt"
    );
    let capture = std::fs::read_to_string(path).expect("the 7.0 capture");
    // used_memory 1721568 of 1800000: 95.6 %.
    let text = capture.replace("maxmemory:0\r\n", "maxmemory:1800000\r\n");
    assert_ne!(text, capture, "maxmemory:0 is in the capture");
    let layout = Layout::default_layout();
    let polled = parts(&text, &layout);
    let views: Vec<&[(Oid, Value)]> = polled.iter().map(|p| p.as_slice()).collect();
    let n = rounds();

    let baseline = per_call(n, || {
        black_box(parts(black_box(&text), &layout));
    });

    let mut defaults = Alarms::new(&AlarmSpec::defaults(), &layout);
    let first = defaults.evaluate(1, true, &views, 1_795_400_000);
    assert_eq!(
        first.events.len(),
        0,
        "count 2: not raised at the first poll"
    );
    let raised = defaults.evaluate(1, true, &views, 1_795_400_010);
    assert_eq!(raised.events.len(), 1, "the memory alarm");
    let with_defaults = per_call(n, || {
        black_box(defaults.evaluate(1, true, black_box(&views), 1_795_400_020));
    });

    // 60 more, on the gauges the part holds, none crossed.
    let mut many = AlarmSpec::defaults();
    for def in metrics::redis_objects()
        .filter(|o| matches!(o.syntax, Syntax::Gauge32 | Syntax::Gauge64))
        .filter(|o| o.arcs.first() != Some(&metrics::LEGACY_BRANCH))
        .filter(|o| <metrics::AlarmField as metrics::Column>::of(o).is_none())
        .take(60)
    {
        many.push(
            AlarmSpec::new(
                &format!("a-{}", def.name),
                def.name,
                Direction::Above,
                i64::MAX,
                i64::MAX - 1,
                1,
                None,
            )
            .expect("a gauge"),
        );
    }
    assert_eq!(many.len(), 64);
    let mut sixty_four = Alarms::new(&many, &layout);
    let with_64 = per_call(n, || {
        black_box(sixty_four.evaluate(1, true, black_box(&views), 1_795_400_020));
    });

    let entries: usize = polled.iter().map(Vec::len).sum();
    println!("alarms: per poll of one instance ({entries} values), {n} polls per phase");
    println!("| phase | per poll | ratio to the baseline |");
    println!("|---|---|---|");
    println!(
        "| baseline: INFO text to the poll's parts | {:.1} µs | 1.00x |",
        baseline / 1000.0
    );
    println!(
        "| the 4 default alarms (memory raised) | {:.2} µs | {:.3}x |",
        with_defaults / 1000.0,
        with_defaults / baseline
    );
    println!(
        "| 64 alarms | {:.2} µs | {:.3}x |",
        with_64 / 1000.0,
        with_64 / baseline
    );
}
