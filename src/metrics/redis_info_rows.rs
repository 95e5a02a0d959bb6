//! REDIS-SERVER-MIB's tables of rows INFO lists: databases, replicas,
//! commands, error prefixes, key-size histograms, I/O threads and
//! modules.

use super::*;
use crate::smi::Syntax;

table! {
    /// `redisKeyspaceTable`: at most 1,024 databases (as the zero-fill).
    pub const KEYSPACE_TABLE = ("redisKeyspaceTable", "redisKeyspaceEntry", [3, 10, 1]) {
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisKsDb", min: 0 },
        rows_from: &["db<N>"],
        resource_type: "redisKeyspace",
        max_rows: Some(1024),
    }
    /// `redisKeyspaceTable` (`redis.3.10`), INDEX { redisInstanceIndex,
    /// redisKsDb }: databases 0..`databases`-1, zero-filled when empty.
    pub const KEYSPACE_COLUMNS = enum KeyspaceField as Keyspace {
        Keys("redisKsKeys", 2, Gauge64).units("keys"),
        Expires("redisKsExpires", 3, Gauge64).units("keys"),
        AvgTtl("redisKsAvgTtl", 4, Gauge64).units("milliseconds"),
        Subexpiry("redisKsSubexpiry", 5, Gauge64).units("keys"),
    }
}

table! {
    /// `redisReplicaTable`: at most 256 replicas of one master.
    pub const REPLICA_TABLE = ("redisReplicaTable", "redisReplicaEntry", [3, 11, 1]) {
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisRpSlot", min: 1 },
        rows_from: &["slave<N>"],
        resource_type: "redisReplica",
        max_rows: Some(256),
    }
    /// `redisReplicaTable` (`redis.3.11`), INDEX { redisInstanceIndex,
    /// redisRpSlot }: the replicas a master lists (`slave<N>`; N + 1 is the slot).
    pub const REPLICA_COLUMNS = enum ReplicaField as Replica {
        Address("redisRpAddress", 2, DisplayString),
        Port("redisRpPort", 3, Gauge32),
        State("redisRpState", 4, DisplayString),
        Offset("redisRpOffset", 5, Counter64).units("bytes"),
        LagSeconds("redisRpLag", 6, Gauge32).units("seconds"),
        /// How far the replica is behind: master_repl_offset minus its offset.
        LagBytes("redisRpLagBytes", 7, Gauge64).units("bytes"),
        // Valkey 8.0+ (src/server.c: rdb-channel and main-channel while a
        // dual-channel full sync runs, replica otherwise).
        /// Valkey's `type=`: replica, rdb-channel, main-channel.
        Kind("redisRpType", 8, DisplayString),
    }
}

table! {
    /// `redisCommandTable`: at most 1,000 commands (Redis 8 has some 240 with
    /// their subcommands).
    pub const COMMAND_TABLE = ("redisCommandTable", "redisCommandEntry", [3, 12, 1]) {
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisCmdName" },
        rows_from: &["cmdstat_<name>"],
        resource_type: "redisCommand",
        max_rows: Some(1000),
    }
    /// `redisCommandTable` (`redis.3.12`), INDEX { redisInstanceIndex,
    /// redisCmdName }: one row per command (`config|get` for subcommands).
    pub const COMMAND_COLUMNS = enum CommandField as Command {
        Calls("redisCmdCalls", 2, Counter64).units("calls"),
        Usec("redisCmdUsec", 3, Counter64).units("microseconds"),
        UsecPerCall("redisCmdUsecPerCall", 4, Gauge32).units("microseconds"),
        Rejected("redisCmdRejected", 5, Counter64).units("calls"),
        Failed("redisCmdFailed", 6, Counter64).units("calls"),
        P50("redisCmdP50", 7, Gauge32).units("microseconds"),
        P99("redisCmdP99", 8, Gauge32).units("microseconds"),
        P999("redisCmdP999", 9, Gauge32).units("microseconds"),
        /// The command's name, the row's index as a readable column.
        Name("redisCmdLabel", 10, DisplayString),
        /// The instance's name and the row's, escaped and joined by `.`
        /// ([`row_key`]): unique among all the rows of the
        /// table, where the name alone repeats across instances (every instance
        /// runs `info`), and fit to be a file name. Managers store rows under it.
        Key("redisCmdKey", 11, DisplayString),
    }
}

impl CommandField {
    /// What the decimal INFO value is multiplied by (the MIB's DISPLAY-HINT
    /// divides it back): µs per call in hundredths, percentiles in
    /// thousandths of a µs; 1 for integer counts.
    pub const fn scale(self) -> u32 {
        match self {
            CommandField::UsecPerCall => 100,
            CommandField::P50 | CommandField::P99 | CommandField::P999 => 1000,
            CommandField::Name
            | CommandField::Key
            | CommandField::Calls
            | CommandField::Usec
            | CommandField::Rejected
            | CommandField::Failed => 1,
        }
    }
}

table! {
    /// `redisErrorTable`: at most 256 error prefixes (Redis itself tracks at
    /// most 128 before it stops adding them).
    pub const ERROR_TABLE = ("redisErrorTable", "redisErrorEntry", [3, 13, 1]) {
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisErrPrefix" },
        rows_from: &["errorstat_<PREFIX>"],
        resource_type: "redisError",
        max_rows: Some(256),
    }
    /// `redisErrorTable` (`redis.3.13`), INDEX { redisInstanceIndex,
    /// redisErrPrefix }: error replies by prefix (`ERR`, `WRONGTYPE`, …).
    pub const ERROR_COLUMNS = enum ErrorField as Error {
        Count("redisErrCount", 2, Counter64).units("replies"),
        /// The error prefix, the row's index as a readable column.
        Name("redisErrLabel", 3, DisplayString),
        /// The instance's name and the row's, escaped and joined by `.`
        /// ([`row_key`]): unique among all the rows of the
        /// table, where the name alone repeats across instances (every instance
        /// runs `info`), and fit to be a file name. Managers store rows under it.
        Key("redisErrKey", 4, DisplayString),
    }
}

table! {
    /// `redisKeysizesTable`: at most 4,096 rows (Redis 8.2 writes at most 5
    /// types of 65 buckets for each database; 4,096 holds every bucket of 12
    /// databases, or the few buckets a real database fills of many more).
    pub const KEYSIZES_TABLE = ("redisKeysizesTable", "redisKeysizesEntry", [3, 25, 1]) {
        augments: None,
        index: RowIndex::InstanceDbTypeBucket { db: "redisKzDb", kind: "redisKzType", bucket: "redisKzBucket" },
        rows_from: &["db<N>_distrib_<type>_sizes", "db<N>_distrib_<type>_items"],
        resource_type: "redisKeysizes",
        max_rows: Some(4096),
    }
    /// `redisKeysizesTable` (`redis.3.25`), INDEX { redisInstanceIndex,
    /// redisKzDb, redisKzType, redisKzBucket }: Redis 8's Keysizes section,
    /// one row per database, type and power-of-two bucket of key sizes.
    pub const KEYSIZES_COLUMNS = enum KeysizesField as Keysizes {
        /// How many keys the bucket holds.
        Keys("redisKzKeys", 4, Gauge64).units("keys"),
        /// The smallest size the bucket holds (0, or a power of two).
        MinSize("redisKzMinSize", 5, Gauge64),
        /// The bucket as Redis writes it (`4M`).
        Label("redisKzLabel", 6, DisplayString),
    }
}

table! {
    /// `redisThreadTable`: at most 256 threads (Redis's io-threads takes at
    /// most 128).
    pub const THREAD_TABLE = ("redisThreadTable", "redisThreadEntry", [3, 26, 1]) {
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisThrNumber", min: 0 },
        rows_from: &["io_thread_<N>"],
        resource_type: "redisThread",
        max_rows: Some(256),
    }
    /// `redisThreadTable` (`redis.3.26`), INDEX { redisInstanceIndex,
    /// redisThrNumber }: Redis 8's Threads section, one row per I/O thread.
    pub const THREAD_COLUMNS = enum ThreadField as Thread {
        Clients("redisThrClients", 2, Gauge32).units("clients"),
        Reads("redisThrReads", 3, Counter64).units("reads"),
        Writes("redisThrWrites", 4, Counter64).units("writes"),
    }
}

table! {
    /// `redisModuleTable`: at most 256 modules.
    pub const MODULE_TABLE = ("redisModuleTable", "redisModuleEntry", [3, 27, 1]) {
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisModName" },
        rows_from: &["module", "name"],
        resource_type: "redisModule",
        max_rows: Some(256),
    }
    /// `redisModuleTable` (`redis.3.27`), INDEX { redisInstanceIndex,
    /// redisModName }: the Modules section, one row per loaded module.
    pub const MODULE_COLUMNS = enum ModuleField as Module {
        Version("redisModVersion", 2, Integer32),
        Api("redisModApi", 3, Integer32),
        Filters("redisModFilters", 4, Gauge32).units("filters"),
        UsedBy("redisModUsedBy", 5, DisplayString),
        Using("redisModUsing", 6, DisplayString),
        Options("redisModOptions", 7, DisplayString),
        /// The module's name, the row's index as a readable column.
        Name("redisModLabel", 8, DisplayString),
        /// The instance's name and the module's, escaped and joined by `.`
        /// ([`row_key`]), for managers to store rows under.
        Key("redisModKey", 9, DisplayString),
    }
}
