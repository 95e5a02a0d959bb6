//! REDIS-SERVER-MIB's tables of keys: the keys `check_keys` names or
//! matches, their streams' consumer groups and how the check went, the
//! big-key sampler's largest keys and HOTKEYS GET's hottest.

use super::*;
use crate::smi::Syntax;

table! {
    /// `redisKeyTable`: the key check's own cap (`check_keys_max`) bounds it.
    pub const KEY_TABLE = ("redisKeyTable", "redisKeyEntry", [3, 21, 1]) {
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisCkName" },
        rows_from: &["check_keys"],
        resource_type: "redisKey",
        max_rows: None,
    }
    /// `redisKeyTable` (`redis.3.21`), INDEX { redisInstanceIndex,
    /// redisCkName }: the keys `check_keys` names or matches.
    pub const KEY_COLUMNS = enum KeyField as Key {
        /// [`KeyType`], from TYPE.
        Type("redisCkType", 2, Enum).enumerated(KeyType::LABELS),
        /// STRLEN, LLEN, SCARD, ZCARD, HLEN or XLEN, as the type has it.
        Length("redisCkLength", 3, Gauge64).units("elements"),
        /// TTL in seconds; -1 when the key does not expire.
        Ttl("redisCkTtl", 4, Integer32).units("seconds"),
        /// MEMORY USAGE, in bytes (`check_keys_memory`).
        Memory("redisCkMemory", 5, Gauge64).units("bytes"),
        /// The `check_keys` entry that names or matched it (its alias too).
        Entry("redisCkPattern", 6, DisplayString),
        /// The key's name, or its alias (`key_names = "alias"`): the row's
        /// index as a readable column.
        Label("redisCkLabel", 7, DisplayString),
        /// The instance's name and the label, escaped and joined by `.`
        /// ([`row_key`]), for managers to store rows under.
        Key("redisCkKey", 8, DisplayString),
        /// Why a command about the key failed (NOPERM…), empty when none did.
        Error("redisCkError", 9, DisplayString),
    }
}

table! {
    pub const STREAM_GROUP_TABLE = ("redisKeyStreamGroupTable", "redisKeyStreamGroupEntry", [3, 22, 1]) {
        augments: None,
        index: RowIndex::InstanceNameAndName { parent: "redisCkName", object: "redisKgName" },
        rows_from: &["XINFO GROUPS", "name"],
        resource_type: "redisKeyStreamGroup",
        max_rows: None,
    }
    /// `redisKeyStreamGroupTable` (`redis.3.22`), INDEX { redisInstanceIndex,
    /// redisCkName, redisKgName }: the consumer groups of the checked keys
    /// that are streams.
    pub const STREAM_GROUP_COLUMNS = enum StreamGroupField as StreamGroup {
        Consumers("redisKgConsumers", 2, Gauge32).units("consumers"),
        Pending("redisKgPending", 3, Gauge64).units("entries"),
        /// Entries not yet delivered to the group (Redis 7.0+).
        Lag("redisKgLag", 4, Gauge64).units("entries"),
        LastDeliveredId("redisKgLastId", 5, DisplayString),
        /// The largest `idle` of its consumers (XINFO CONSUMERS), ms.
        MaxIdle("redisKgMaxIdle", 6, Gauge64).units("milliseconds"),
        /// The group's name, the row's last index as a readable column.
        Label("redisKgLabel", 7, DisplayString),
        /// The instance's name, the key's label and the group's, escaped and
        /// joined by `.`.
        Key("redisKgKey", 8, DisplayString),
    }
}

table! {
    pub const KEY_CHECK_TABLE = ("redisKeyCheckTable", "redisKeyCheckEntry", [3, 24, 1]) {}
    /// `redisKeyCheckTable` (`redis.3.24`, AUGMENTS redisInstanceEntry): how
    /// the last key check went, where `check_keys` is set.
    pub const KEY_CHECK_COLUMNS = enum KeyCheckField as KeyCheck {
        /// Rows of `redisKeyTable` the instance has.
        Keys("redisKcKeys", 1, Gauge32).units("keys"),
        /// Keys the patterns matched but the row cap (or a name no index can
        /// hold) left out.
        KeysLeftOut("redisKcKeysLeftOut", 2, Gauge32).units("keys"),
        /// Consumer groups the per-stream cap left out.
        GroupsLeftOut("redisKcGrpsLeftOut", 3, Gauge32).units("groups"),
        /// Whether every pattern's SCAN finished its sweep of the keyspace;
        /// false while one goes on at the next check (its budget ran out).
        ScanComplete("redisKcScanComplete", 4, TruthValue),
        /// SCAN calls the last check made.
        ScanCalls("redisKcScanCalls", 5, Gauge32).units("calls"),
        /// Milliseconds the last check took.
        CheckTime("redisKcCheckTime", 6, Gauge32).units("milliseconds"),
        /// Why the last check failed in part (NOPERM on SCAN…), empty when not.
        LastError("redisKcLastError", 7, DisplayString),
    }
}

table! {
    /// `redisBigKeyTable`: `big_keys_rows` per database, at most this many in
    /// all.
    pub const BIG_KEY_TABLE = ("redisBigKeyTable", "redisBigKeyEntry", [3, 31, 1]) {
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisBkRank", min: 1 },
        rows_from: &[],
        resource_type: "redisBigKey",
        max_rows: Some(1000),
    }
    /// `redisBigKeyTable` (`redis.3.31`), INDEX { redisInstanceIndex,
    /// redisBkRank }: the largest keys of each database the big-key sampler
    /// has seen, ranked over all databases.
    pub const BIG_KEY_COLUMNS = enum BigKeyField as BigKey {
        /// The name (escaped) or its alias, as `key_names` says.
        Name("redisBkName", 2, DisplayString),
        /// [`KeyType`], from TYPE.
        Type("redisBkType", 3, Enum).enumerated(KeyType::LABELS),
        /// MEMORY USAGE … SAMPLES, in bytes.
        Bytes("redisBkBytes", 4, Gauge64).units("bytes"),
        /// The database it is in.
        Database("redisBkDatabase", 5, Gauge32),
        /// UNIX time of its measurement.
        Seen("redisBkSeen", 6, Gauge64).units("seconds"),
    }
}

table! {
    /// `redisHotKeyTable`: the reply's own cap (`MAX_HOT_KEYS`) bounds it.
    pub const HOT_KEY_TABLE = ("redisHotKeyTable", "redisHotKeyEntry", [3, 32, 1]) {
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisHkRank", min: 1 },
        rows_from: &[],
        resource_type: "redisHotKey",
        max_rows: Some(100),
    }
    /// `redisHotKeyTable` (`redis.3.32`), INDEX { redisInstanceIndex,
    /// redisHkRank }: the keys `HOTKEYS GET` reports, hottest first.
    pub const HOT_KEY_COLUMNS = enum HotKeyField as HotKey {
        /// The name (escaped) or its alias, as `key_names` says.
        Name("redisHkName", 2, DisplayString),
        /// Valkey's `db`.
        Database("redisHkDatabase", 3, Gauge32),
        /// Valkey's `qps`.
        Qps("redisHkQps", 4, Gauge64).units("accesses per second"),
        /// Redis 8.6's `by-cpu-time-us`.
        CpuUsec("redisHkCpuTime", 5, Gauge64).units("microseconds"),
        /// Redis 8.6's `by-net-bytes`.
        NetBytes("redisHkNetBytes", 6, Gauge64).units("bytes"),
        /// OBJECT FREQ of a key the agent sampled (the LFU fallback).
        LfuCounter("redisHkLfuCounter", 7, Gauge32),
    }
}

enumeration! {
    /// `redisCkType`: what TYPE says of a checked key. A named key that
    /// does not exist is none(8); a matched one that vanished has no row.
    KeyType {
        String = 1 => ["string"],
        List = 2 => ["list"],
        Set = 3 => ["set"],
        Zset = 4 => ["zset"],
        Hash = 5 => ["hash"],
        Stream = 6 => ["stream"],
        Other = 7 => ["other"],
        None = 8 => ["none"],
    }
}
