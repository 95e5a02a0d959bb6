//! The live collection of tests/opennms.rs, step by step: the stack comes
//! up, is sampled while Puppet runs, every collected object must be
//! served, the samples are stored as OpenNMS stores them, and every report
//! is drawn for every resource OpenNMS offers it on.

use super::*;

/// The live collection on one server kind.
pub fn collect_and_draw(kind: ServerKind) {
    let Some(binary) =
        kind.binary_or_skip("the_agent_serves_every_collected_object_and_every_report_draws")
    else {
        return;
    };
    let started = Instant::now();
    let objs = collection();
    let types = resource_types();
    let (_, reports) = reports();
    run_tool("rrdtool", "rrdtool", &["--version"]);

    let stack = Stack::start(kind, &binary);
    stack.wait_until_ready();
    println!("stack up after {:?}", started.elapsed());
    let samples = stack.samples_while_puppet_runs();
    println!("{SAMPLES} samples after {:?}", started.elapsed());

    let reported = stack.what_the_servers_report();
    let explained = every_collected_object_is_served(kind, &objs, &samples, &reported);

    let t0 = first_sample_time();
    let resources = stored_as_opennms_stores_them(&objs, &types, &samples, t0);
    rows_by_name_would_share_a_directory_rows_by_key_do_not(&resources);
    let rrd = Rrd {
        root: stack.dir.path().join("rrd/snmp/1"),
    };
    rrd.write(&resources, t0, started);
    labels_come_out_whole(&types, &resources);

    let jobs = every_report_is_drawn(&reports, &resources, &explained, &rrd, &stack, t0);
    println!(
        "{} reports drawn {} times after {:?}",
        reports.len(),
        jobs.len(),
        started.elapsed()
    );
    copy_drawings_to_docs(kind, &jobs);
}

/// The servers of one kind, Puppet and the agent watching them all. Fields
/// drop in order: the agent before the servers, the servers before the
/// folder they keep their files in.
struct Stack {
    kind: ServerKind,
    agent: testkit::Agent,
    _sentinel: Proc,
    sentinel_port: u16,
    cluster: Redis,
    replica: Redis,
    main: Redis,
    puppet: PuppetApply,
    dir: tempfile::TempDir,
    snmpd: Snmpd,
    instances: usize,
}

impl Stack {
    /// A private snmpd, a master with AOF, its replica, a single-node
    /// cluster, a sentinel watching the master, keys to check and a failed
    /// AUTH on the master, and the agent watching them and Puppet.
    fn start(kind: ServerKind, binary: &Path) -> Stack {
        // Redis 6.2 has neither enable-debug-command (DEBUG is always allowed
        // there) nor cluster-port (the bus is port + 10000) nor ADDSLOTSRANGE.
        let since_7 = kind != ServerKind::Redis62;
        let snmpd = Snmpd::start();
        let mut main_config = vec![
            "appendonly yes",
            "latency-monitor-threshold 1",
            // A memory limit, so its share (redisMemUsedOfMax) is served.
            "maxmemory 1gb",
            // The replica's first sync at once, not after the 5 s diskless delay.
            "repl-diskless-sync no",
        ];
        if since_7 {
            main_config.push("enable-debug-command local");
        }
        let main = Redis::start_binary(binary, &main_config);
        let replica =
            Redis::start_binary(binary, &[&format!("replicaof 127.0.0.1 {}", main.port())]);
        let dir = tempfile::tempdir().unwrap();
        let cluster = start_cluster_node(binary, since_7, dir.path());
        let (sentinel, sentinel_port) = start_sentinel(kind, &main, dir.path());
        println!("{}: {}", kind.label(), binary.display());
        let puppet = PuppetApply::new();
        let instances = [
            ("main", main.address()),
            ("replica", replica.address()),
            ("cluster node/1", cluster.address()),
            ("sentinel", format!("127.0.0.1:{sentinel_port}")),
        ];
        // Keys to check on main: a list, and a stream with a consumer group
        // that has read an entry.
        main.cli(&["RPUSH", "jobs", "a", "b"]);
        main.cli(&["XADD", "events", "*", "f", "v"]);
        main.cli(&["XGROUP", "CREATE", "events", "billing", "0"]);
        main.cli(&[
            "XREADGROUP",
            "GROUP",
            "billing",
            "c1",
            "STREAMS",
            "events",
            ">",
        ]);
        // A failed AUTH on main: a row of redisAclRefusalTable (ACL LOG).
        let _ = main.command(&["AUTH", "nobody", "wrong"]);
        let key_checks = "check_keys = [\"jobs\", \"ev*\"]\ncheck_keys_interval = 1\n\
                          check_keys_memory = true\n";
        // puppetCertificateTable: a dated row (a real CA) and a missing one.
        let ssl = testkit::pki::ssldir_with_ca(dir.path());
        let agent = instances
            .iter()
            .fold(AgentConfig::new(&snmpd), |config, (name, address)| {
                let extra = if *name == "main" { key_checks } else { "" };
                config.redis(name, address, extra)
            })
            .puppet(&puppet, &ssl)
            .start(dir.path());
        Stack {
            kind,
            agent,
            _sentinel: sentinel,
            sentinel_port,
            cluster,
            replica,
            main,
            puppet,
            dir,
            snmpd,
            instances: instances.len(),
        }
    }

    /// Every instance up, the replica attached, the sentinel's master
    /// listed.
    fn wait_until_ready(&self) {
        load(self.main.port(), 0);
        let ready = wait_until(Duration::from_secs(15), || {
            let s = sample(&self.snmpd);
            let up = (1..=self.instances).all(|i| {
                s.get(&format!(".1.3.6.1.4.1.20267.400.3.1.1.4.{i}"))
                    .and_then(Var::number)
                    == Some(1)
            });
            let replica_row = below(&s, ".1.3.6.1.4.1.20267.400.3.11.1.2")
                .next()
                .is_some();
            let sentinel_row = below(&s, ".1.3.6.1.4.1.20267.400.3.14.1.2")
                .next()
                .is_some();
            up && replica_row && sentinel_row
        });
        assert!(ready, "the stack did not come up:\n{}", self.agent.log());
    }

    /// [`SAMPLES`] walks about a second apart, while Puppet runs now and
    /// then and clients come and go: some blocked in BLPOP, some
    /// subscribed.
    fn samples_while_puppet_runs(&self) -> Vec<Sample> {
        let mut samples: Vec<Sample> = Vec::new();
        let t = self.puppet.target().display().to_string();
        let runs = [
            format!(
                "file {{ '{t}/a': content => \"a\\n\" }}\nfile {{ '{t}/b': content => \"b\\n\" }}\nnotify {{ 'hello': }}\n"
            ),
            format!(
                "file {{ '{t}/a': content => \"A\\n\" }}\nexec {{ 'fails': command => '/bin/false' }}\nnotify {{ 'after': require => Exec['fails'] }}\n"
            ),
            format!("file {{ '{t}/a': content => \"A\\n\" }}\nfile {{ '{t}/c': content => \"c\\n\" }}\n"),
        ];
        std::thread::scope(|scope| {
            let runner = scope.spawn(|| {
                for (i, manifest) in runs.iter().enumerate() {
                    self.puppet.apply(&format!("run{i}"), manifest, &[]);
                    // Runs apart as an agent's are: time.last_run counts whole
                    // seconds, and two runs in one second are one run to the
                    // watcher (puppetRunInterval needs two it told apart).
                    std::thread::sleep(Duration::from_millis(1500));
                }
            });
            let mut blocked: Vec<Proc> = Vec::new();
            let mut subscribed: Vec<Proc> = Vec::new();
            for round in 0..SAMPLES {
                blocked.truncate(0);
                subscribed.truncate(0);
                for i in 0..round % 4 {
                    blocked.push(self.main.spawn_cli(&["BLPOP", &format!("queue:{i}"), "0"]));
                }
                for i in 0..(round + 2) % 3 {
                    subscribed.push(self.main.spawn_cli(&["SUBSCRIBE", &format!("channel:{i}")]));
                }
                load(self.main.port(), round);
                std::thread::sleep(Duration::from_millis(1100));
                if round == SAMPLES - 1 {
                    // The last sample comes once the watcher has counted every
                    // run: on a loaded machine `puppet apply` can outlast the
                    // other samples, and puppetRunInterval needs two runs.
                    let runs_observed = ".1.3.6.1.4.1.20267.401.1.45.0";
                    let counted = wait_until(Duration::from_secs(120), || {
                        runner.is_finished()
                            && self.snmpd.numeric().get_one(runs_observed).number()
                                >= Some(runs.len() as u64)
                    });
                    assert!(
                        counted,
                        "the watcher did not count the {} Puppet runs",
                        runs.len()
                    );
                }
                samples.push(sample(&self.snmpd));
            }
        });
        samples
    }

    /// What the servers report, to tell a missing field from a missing
    /// object.
    fn what_the_servers_report(&self) -> Reported {
        let mut info = String::new();
        for redis in [&self.main, &self.replica, &self.cluster] {
            info.push_str(&redis.info_section("everything"));
        }
        info.push_str(&self.cluster.cli(&["CLUSTER", "INFO"]));
        info.push_str(&redis_cli_text(self.sentinel_port, &["INFO"]));
        let commandlog = redis_cli_text(self.main.port(), &["COMMANDLOG", "LEN", "large-request"]);
        let summary =
            std::fs::read_to_string(self.puppet.public_dir().join("last_run_summary.yaml"))
                .expect("no Puppet summary: did puppet apply run?");
        Reported {
            info,
            commandlog,
            summary,
        }
    }
}

/// A single-node cluster holding every slot.
fn start_cluster_node(binary: &Path, since_7: bool, dir: &Path) -> Redis {
    let nodes_conf = format!("cluster-config-file {}", dir.join("nodes.conf").display());
    // The cluster bus is port + 10000 unless told: a port no lock holds.
    let bus = format!("cluster-port {}", testkit::free_port());
    let mut cluster_config = vec!["cluster-enabled yes", nodes_conf.as_str()];
    if since_7 {
        cluster_config.push(bus.as_str());
    }
    let cluster = Redis::start_binary(binary, &cluster_config);
    if since_7 {
        cluster.cli(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
    } else {
        let slots: Vec<String> = (0..16384).map(|s| s.to_string()).collect();
        let mut args = vec!["CLUSTER", "ADDSLOTS"];
        args.extend(slots.iter().map(String::as_str));
        cluster.cli(&args);
    }
    cluster
}

/// INFO (and CLUSTER INFO) of every instance, COMMANDLOG LEN's answer and
/// the Puppet summary.
struct Reported {
    info: String,
    commandlog: String,
    summary: String,
}

/// Every collected object is served, with the wire type of its syntax,
/// unless no server here reports its field: those are returned, alias →
/// why.
fn every_collected_object_is_served<'a>(
    kind: ServerKind,
    objs: &'a [MibObj],
    samples: &[Sample],
    reported: &Reported,
) -> BTreeMap<&'a str, String> {
    let mut problems = Vec::new();
    let mut explained: BTreeMap<&str, String> = BTreeMap::new();
    for o in objs {
        let def = object_at(&o.oid).expect("checked by the static tests");
        let shape = row_index(&o.instance);
        let mut served = false;
        for s in samples {
            for (suffix, var) in below(s, &o.oid) {
                if !fits_index(shape, suffix) {
                    problems.push(format!("{}.{suffix}: not a {:?} index", def.name, shape));
                }
                let wire = def.syntax.wire_type().net_snmp_label();
                if var.ty != wire && !(var.ty.is_empty() && wire == "STRING") {
                    problems.push(format!("{var}: {} is sent as {wire}", def.name));
                }
                served = true;
            }
        }
        if !served {
            match why_absent(def, &reported.info, &reported.summary, &reported.commandlog) {
                Some(why) => {
                    explained.insert(o.alias.as_str(), why);
                }
                None => problems.push(format!(
                    "{} ({}, group {}) was never served",
                    def.name, o.oid, o.group
                )),
            }
        }
    }
    for (alias, why) in &explained {
        println!("not served by {}: {alias}: {why}", kind.label());
    }
    assert!(
        problems.is_empty(),
        "{}:\n{}",
        kind.label(),
        problems.join("\n")
    );
    explained
}

/// The time of the first sample: sample k is stored at t0 + k·STEP, in
/// the past.
fn first_sample_time() -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    (now / STEP) * STEP - SAMPLES as u64 * STEP
}

/// A resource: its type (or [`NODE`]) and its directory's name.
type ResourceKey = (String, String);

/// The samples, as OpenNMS would store them: one resource per node or per
/// row, the time of sample k being t0 + k·STEP. Two rows of a
/// sibling-stored type in one directory fail: they would mix their
/// samples.
fn stored_as_opennms_stores_them(
    objs: &[MibObj],
    types: &[loader::ResourceTypeDef],
    samples: &[Sample],
    t0: u64,
) -> BTreeMap<ResourceKey, Resource> {
    let type_of = |name: &str| types.iter().find(|t| t.name == name).unwrap();
    // The OID of a resource type's sibling column, from its alias.
    let sibling_oid = |ty: &str| {
        let alias = type_of(ty)
            .param("sibling-column-name")
            .unwrap_or_else(|| panic!("{ty}: no sibling-column-name"));
        let o = objs
            .iter()
            .find(|o| o.alias == alias && o.instance == ty)
            .unwrap_or_else(|| panic!("{ty}: sibling column {alias} is not collected"));
        o.oid.clone()
    };
    let mut resources: BTreeMap<ResourceKey, Resource> = BTreeMap::new();
    // Which row each directory of a sibling-stored type holds.
    let mut stored_by_sibling: BTreeMap<ResourceKey, String> = BTreeMap::new();
    for (k, s) in samples.iter().enumerate() {
        let t = t0 + k as u64 * STEP;
        for o in objs {
            for (suffix, var) in below(s, &o.oid) {
                let key = match o.instance.as_str() {
                    "0" => (NODE.to_string(), String::new()),
                    ty if type_of(ty)
                        .storage
                        .ends_with("SiblingColumnStorageStrategy") =>
                    {
                        let replace_all = type_of(ty)
                            .param("replace-all")
                            .unwrap_or_else(|| panic!("{ty}: no replace-all"));
                        let name = s
                            .get(&format!("{}.{suffix}", sibling_oid(ty)))
                            .map(Var::text)
                            .unwrap_or_default();
                        let key = (ty.to_string(), sibling_dir(&name, replace_all, suffix));
                        let first = stored_by_sibling
                            .entry(key.clone())
                            .or_insert_with(|| suffix.to_string());
                        assert_eq!(
                            first, suffix,
                            "{ty}: rows {first} and {suffix} are both stored in {}",
                            key.1
                        );
                        key
                    }
                    ty => (ty.to_string(), suffix.to_string()),
                };
                let resource = resources.entry(key).or_default();
                resource.index = suffix.to_string();
                if o.ty == "string" {
                    resource.strings.insert(o.alias.clone(), var.text());
                    continue;
                }
                let value = var.value.split_whitespace().next().unwrap_or("");
                assert!(
                    value.parse::<i128>().is_ok(),
                    "{var}: not a number for {}",
                    o.alias
                );
                let ds = if o.ty == "counter" {
                    "COUNTER"
                } else {
                    "GAUGE"
                };
                let entry = resource
                    .series
                    .entry(o.alias.clone())
                    .or_insert((ds, Vec::new()));
                entry.1.push((t, value.to_string()));
            }
        }
    }
    resources
}

/// Why the string-indexed rows are stored by key: their names repeat
/// across instances, their keys do not.
fn rows_by_name_would_share_a_directory_rows_by_key_do_not(
    resources: &BTreeMap<ResourceKey, Resource>,
) {
    let mut instances_of: BTreeMap<(&str, &str, &str), BTreeSet<&str>> = BTreeMap::new();
    for ((ty, _), resource) in resources {
        if ty == NODE || !matches!(row_index(ty), Some(RowIndex::InstanceAndName { .. })) {
            continue;
        }
        let instance = resource.index.split('.').next().unwrap_or_default();
        for (alias, value) in &resource.strings {
            instances_of
                .entry((ty.as_str(), alias.as_str(), value.as_str()))
                .or_default()
                .insert(instance);
        }
    }
    let shared = |column: &str| -> Vec<String> {
        instances_of
            .iter()
            .filter(|((_, alias, _), instances)| alias.ends_with(column) && instances.len() > 1)
            .map(|((ty, _, value), instances)| format!("{ty} {value} ({})", instances.len()))
            .collect()
    };
    let (shared_names, shared_keys) = (shared("Label"), shared("Key"));
    println!(
        "row names served by more than one instance (their rows would share a directory if stored by name): {}",
        shared_names.join(", ")
    );
    assert!(
        !shared_names.is_empty(),
        "no row name repeats across the instances: this run does not show why rows are stored by key"
    );
    assert!(shared_keys.is_empty(), "row keys repeat: {shared_keys:?}");
}

/// Where the RRD files of the node go, as OpenNMS lays them out.
struct Rrd {
    root: PathBuf,
}

impl Rrd {
    /// The directory of a resource.
    fn dir_of(&self, (ty, name): &ResourceKey) -> PathBuf {
        if ty == NODE {
            self.root.clone()
        } else {
            self.root.join(ty).join(name)
        }
    }

    /// One `<alias>.rrd` per data source and a `strings.properties` per
    /// resource directory, written the way OpenNMS writes them.
    fn write(&self, resources: &BTreeMap<ResourceKey, Resource>, t0: u64, started: Instant) {
        let mut commands = Vec::new();
        for (key, resource) in resources {
            let path = self.dir_of(key);
            std::fs::create_dir_all(&path).unwrap();
            let strings: String = resource
                .strings
                .iter()
                .map(|(k, v)| format!("{k}={}\n", v.replace('\\', "\\\\").replace('\n', "\\n")))
                .collect();
            std::fs::write(path.join("strings.properties"), strings).unwrap();
            for (alias, (ds, points)) in &resource.series {
                let file = path.join(format!("{alias}.rrd"));
                commands.push(create_rrd(&file, alias, ds, t0 - STEP));
                let updates: Vec<String> = points.iter().map(|(t, v)| format!("{t}:{v}")).collect();
                commands.push(format!("update {} {}", file.display(), updates.join(" ")));
            }
        }
        rrdtool_batch(&commands);
        println!(
            "{} resources, {} RRD files after {:?}",
            resources.len(),
            commands.len() / 2,
            started.elapsed()
        );
    }
}

/// Resource labels, as the web UI makes them: `${index}` is the
/// directory's name (GenericIndexResourceType, see loader/resource_types.rs).
fn labels_come_out_whole(
    types: &[loader::ResourceTypeDef],
    resources: &BTreeMap<ResourceKey, Resource>,
) {
    for ((ty, name), resource) in resources {
        if ty == NODE {
            continue;
        }
        let t = types.iter().find(|t| &t.name == ty).unwrap();
        let label = resource_label(
            t.resource_label.as_deref().unwrap_or("${index}"),
            name,
            &resource.strings,
        );
        assert!(
            !label.contains("${") && !label.is_empty(),
            "{ty}/{name}: label {label:?}"
        );
    }
}

/// A drawing to make: the report, what it is drawn for, its RRD files and
/// the PNG.
type Job<'a> = (&'a Report, String, Vec<PathBuf>, PathBuf);

/// Every report, for every resource OpenNMS offers it on
/// (PropertiesGraphDao.getPrefabGraphsForResource, see loader/graphs.rs),
/// drawn with rrdtool; a report offered on no resource of this host must
/// be named in the README, with what it needs.
fn every_report_is_drawn<'a>(
    reports: &'a [Report],
    resources: &BTreeMap<ResourceKey, Resource>,
    explained: &BTreeMap<&str, String>,
    rrd: &Rrd,
    stack: &Stack,
    t0: u64,
) -> Vec<Job<'a>> {
    let pngs = stack.dir.path().join("png");
    std::fs::create_dir_all(&pngs).unwrap();
    let scratch = stack.dir.path().join("rrd/never-served");
    let (jobs, needs_more, mut failures) =
        drawings_to_make(reports, resources, explained, rrd, &pngs, &scratch, t0);
    let (start, end) = (t0, t0 + (SAMPLES as u64 - 1) * STEP);
    failures.extend(draw_all(&jobs, start, end));
    let readme = read_opennms("README.md");
    let needs_section = readme
        .split_once(NEEDS_MORE_HEADING)
        .map(|(_, rest)| rest.split("\n#").next().unwrap_or(""))
        .unwrap_or("");
    for id in &needs_more {
        if !needs_section.contains(&format!("`{id}`")) {
            failures.push(format!(
                "{id} is offered on no resource of this host: \"{NEEDS_MORE_HEADING}\" in opennms/README.md must say what it needs"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}:\n{}",
        stack.kind.label(),
        failures.join("\n")
    );
    jobs
}

/// The drawings of every report on each resource it is offered on; a
/// report offered on none is drawn from empty RRD files (which still
/// checks its command) when what it misses is what no server here
/// reports, and named in the returned list. Returns the jobs, those
/// reports, and the failures.
fn drawings_to_make<'a>(
    reports: &'a [Report],
    resources: &BTreeMap<ResourceKey, Resource>,
    explained: &BTreeMap<&str, String>,
    rrd: &Rrd,
    pngs: &Path,
    scratch: &Path,
    t0: u64,
) -> (Vec<Job<'a>>, Vec<String>, Vec<String>) {
    let (graphs, graph_problems) = loader::load_graphs(&read_opennms(GRAPH_FILE));
    assert!(graph_problems.is_empty(), "{graph_problems:?}");
    let offered_on = |r: &Report, ty: &str, resource: &Resource| {
        let rrd: BTreeSet<String> = resource.series.keys().cloned().collect();
        let strings: BTreeSet<String> = resource.strings.keys().cloned().collect();
        loader::offered_reports(&graphs, ty, &rrd, &strings)
            .iter()
            .any(|g| g.name == r.id)
    };
    let (mut jobs, mut needs_more, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for r in reports {
        let before = jobs.len();
        for (key, resource) in resources.iter().filter(|((ty, _), _)| *ty == r.ty) {
            if !offered_on(r, &key.0, resource) {
                continue;
            }
            let files = r
                .columns
                .iter()
                .map(|c| rrd.dir_of(key).join(format!("{c}.rrd")))
                .collect();
            let png = pngs.join(format!("{}-{}.png", r.id, key.1.replace('/', "_")));
            jobs.push((r, format!("{}/{}", key.0, key.1), files, png));
        }
        if jobs.len() > before {
            continue;
        }
        let missing: Vec<&String> = r
            .columns
            .iter()
            .filter(|c| !resources.values().any(|res| res.series.contains_key(*c)))
            .collect();
        if missing.is_empty() || !missing.iter().all(|c| explained.contains_key(c.as_str())) {
            failures.push(format!(
                "{}: no resource has all of {:?} (never served: {missing:?})",
                r.id, r.columns
            ));
            continue;
        }
        std::fs::create_dir_all(scratch).unwrap();
        let files: Vec<PathBuf> = r
            .columns
            .iter()
            .map(|c| scratch.join(format!("{c}.rrd")))
            .collect();
        let creates: Vec<String> = r
            .columns
            .iter()
            .zip(&files)
            .map(|(c, f)| create_rrd(f, c, "GAUGE", t0 - STEP))
            .collect();
        rrdtool_batch(&creates);
        println!(
            "{}: drawn without data, nothing here serves {missing:?}",
            r.id
        );
        needs_more.push(r.id.clone());
        let png = pngs.join(format!("{}-empty.png", r.id));
        jobs.push((r, "no data".into(), files, png));
    }
    (jobs, needs_more, failures)
}

/// Draws every job, on as many threads as the machine has cores; returns
/// what failed.
fn draw_all(jobs: &[Job<'_>], start: u64, end: u64) -> Vec<String> {
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    std::thread::scope(|scope| {
        let chunks: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(workers).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|(r, what, files, png)| {
                            draw(r, files, start, end, png)
                                .err()
                                .map(|e| format!("{} for {what}: {e}", r.id))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

/// `REDIS_SNMP_WRITE_DOCS=1`: a few of Redis 7.0's drawings go to `docs/`.
fn copy_drawings_to_docs(kind: ServerKind, jobs: &[Job<'_>]) {
    if kind != ServerKind::Redis70 || std::env::var_os("REDIS_SNMP_WRITE_DOCS").is_none() {
        return;
    }
    let out = repo_root().join("docs");
    std::fs::create_dir_all(&out).unwrap();
    let set = redis_snmp::redis::readings::row_key("main", "set");
    for (id, resource) in [
        ("redis.connections", format!("{NODE}/")),
        ("redis.memory", format!("{NODE}/")),
        ("redis.commands", format!("{NODE}/")),
        (
            "redis.instance.memory.breakdown",
            "redisInstance/main".into(),
        ),
        ("redis.command.calls", format!("redisCommand/{set}")),
        ("puppet.runtime", format!("{NODE}/")),
        ("puppet.resources", format!("{NODE}/")),
    ] {
        let (_, _, _, png) = jobs
            .iter()
            .find(|(r, what, _, _)| r.id == id && *what == resource)
            .unwrap_or_else(|| panic!("{id} was not drawn for {resource}"));
        let to = out.join(format!("opennms-{}.png", id.replace('.', "-")));
        std::fs::copy(png, &to).unwrap();
        println!("wrote {}", to.display());
    }
}
