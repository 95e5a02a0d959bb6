//! REDIS-SERVER-MIB's tables read from commands besides INFO: the masters
//! a sentinel watches (SENTINEL MASTERS), the slow log (SLOWLOG), latency
//! events (LATENCY LATEST) and the clients per name and per user (CLIENT
//! LIST).

use super::*;
use crate::smi::Syntax;

table! {
    pub const SENTINEL_TABLE = ("redisSentinelTable", "redisSentinelEntry", [3, 14, 1]) {
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisSntName" },
        rows_from: &["SENTINEL MASTERS", "name"],
        resource_type: "redisSentinelMaster",
        max_rows: None,
    }
    /// `redisSentinelTable` (`redis.3.14`), INDEX { redisInstanceIndex,
    /// redisSntName }: the masters a sentinel watches (SENTINEL MASTERS).
    pub const SENTINEL_MASTER_COLUMNS = enum SentinelField as SentinelMaster {
        /// ok(1), sdown(2), odown(3), from the flags.
        State("redisSntState", 2, Enum).enumerated(SentinelState::LABELS),
        Flags("redisSntFlags", 3, DisplayString),
        Address("redisSntAddress", 4, DisplayString),
        Port("redisSntPort", 5, Gauge32),
        Replicas("redisSntReplicas", 6, Gauge32).units("replicas"),
        OtherSentinels("redisSntSentinels", 7, Gauge32).units("sentinels"),
        Quorum("redisSntQuorum", 8, Gauge32).units("sentinels"),
        /// The master's name, the row's index as a readable column.
        Name("redisSntLabel", 9, DisplayString),
        /// The instance's name and the row's, escaped and joined by `.`
        /// ([`row_key`]): unique among all the rows of the
        /// table, where the name alone repeats across instances (every instance
        /// runs `info`), and fit to be a file name. Managers store rows under it.
        Key("redisSntKey", 10, DisplayString),
    }
}

table! {
    pub const SLOWLOG_TABLE = ("redisSlowlogTable", "redisSlowlogEntry", [3, 16, 1]) {}
    /// `redisSlowlogTable` (`redis.3.16`, AUGMENTS redisInstanceEntry): the
    /// slow log's length and its newest entry, where SLOWLOG is allowed.
    pub const SLOWLOG_COLUMNS = enum SlowlogField as Slowlog {
        Length("redisSlowlogLen", 1, Gauge32).units("entries"),
        LastId("redisSlowlogLastId", 2, Gauge64),
        LastTime("redisSlowlogLastTime", 3, Gauge64).units("seconds").alias("redisSlowlogTime"),
        LastUsec("redisSlowlogLastUsec", 4, Gauge64).units("microseconds").alias("redisSlowlogUsec"),
        // Valkey's COMMANDLOG (8.1+; valkey-doc commands/commandlog-len.md): the
        // two logs besides the slow one, whose length SLOWLOG LEN already gives.
        /// COMMANDLOG LEN large-request (Valkey 8.1+): commands whose request
        /// was over commandlog-request-larger-than.
        LargeRequests("redisSlowlogReqLen", 5, Gauge32).units("entries"),
        /// COMMANDLOG LEN large-reply (Valkey 8.1+): commands whose reply was
        /// over commandlog-reply-larger-than.
        LargeReplies("redisSlowlogRplLen", 6, Gauge32).units("entries"),
    }
}

table! {
    pub const LATENCY_TABLE = ("redisLatencyTable", "redisLatencyEntry", [3, 17, 1]) {
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisLatEvent" },
        rows_from: &["LATENCY LATEST"],
        resource_type: "redisLatency",
        max_rows: None,
    }
    /// `redisLatencyTable` (`redis.3.17`), INDEX { redisInstanceIndex,
    /// redisLatEvent }: LATENCY LATEST, one row per event (`command`, `fork`…).
    pub const LATENCY_COLUMNS = enum LatencyField as Latency {
        LastTime("redisLatLastTime", 2, Gauge64).units("seconds"),
        LastMs("redisLatLastMs", 3, Gauge32).units("milliseconds"),
        MaxMs("redisLatMaxMs", 4, Gauge32).units("milliseconds"),
        /// The event's name, the row's index as a readable column.
        Name("redisLatLabel", 5, DisplayString),
        /// The instance's name and the row's, escaped and joined by `.`
        /// ([`row_key`]): unique among all the rows of the
        /// table, where the name alone repeats across instances (every instance
        /// runs `info`), and fit to be a file name. Managers store rows under it.
        Key("redisLatKey", 6, DisplayString),
    }
}

table! {
    /// `redisClientNameTable`: CLIENT LIST's aggregation caps it already.
    pub const CLIENT_NAME_TABLE = ("redisClientNameTable", "redisClientNameEntry", [3, 19, 1]) {
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisCnName" },
        rows_from: &["CLIENT LIST", "name"],
        resource_type: "redisClientName",
        max_rows: None,
    }
    /// `redisClientNameTable` (`redis.3.19`), INDEX { redisInstanceIndex,
    /// redisCnName }: CLIENT LIST aggregated per client name.
    pub const CLIENT_NAME_COLUMNS = enum ClientField as ClientName {
        Count("redisCnCount", 2, Gauge32).units("connections"),
        OldestAge("redisCnOldestAge", 3, Gauge32).units("seconds"),
        MaxIdle("redisCnMaxIdle", 4, Gauge32).units("seconds"),
        MaxOutputMem("redisCnMaxOutputMem", 5, Gauge64).units("bytes"),
        MaxTotalMem("redisCnMaxTotalMem", 6, Gauge64).units("bytes"),
        Blocked("redisCnBlocked", 7, Gauge32).units("connections"),
        /// The name (or user), the row's index as a readable column.
        Label("redisCnLabel", 8, DisplayString),
        /// The instance's name and the row's, escaped and joined by `.`
        /// ([`row_key`]): unique among all the rows of the
        /// table, and fit to be a file name. Managers store rows under it.
        Key("redisCnKey", 9, DisplayString),
    }
}

table! {
    pub const CLIENT_USER_TABLE = ("redisClientUserTable", "redisClientUserEntry", [3, 20, 1]) {
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisCuUser" },
        rows_from: &["CLIENT LIST", "user"],
        resource_type: "redisClientUser",
        max_rows: None,
    }
    /// `redisClientUserTable` (`redis.3.20`), INDEX { redisInstanceIndex,
    /// redisCuUser }: CLIENT LIST aggregated per ACL user.
    pub const CLIENT_USER_COLUMNS = ClientField as ClientUser {
        Count("redisCuCount", 2, Gauge32).units("connections"),
        OldestAge("redisCuOldestAge", 3, Gauge32).units("seconds"),
        MaxIdle("redisCuMaxIdle", 4, Gauge32).units("seconds"),
        MaxOutputMem("redisCuMaxOutputMem", 5, Gauge64).units("bytes"),
        MaxTotalMem("redisCuMaxTotalMem", 6, Gauge64).units("bytes"),
        Blocked("redisCuBlocked", 7, Gauge32).units("connections"),
        Label("redisCuLabel", 8, DisplayString),
        Key("redisCuKey", 9, DisplayString),
    }
}

enumeration! {
    /// `redisSntState`: a watched master as its flags say.
    SentinelState {
        Ok = 1 => ["ok"],
        Sdown = 2 => ["sdown"],
        Odown = 3 => ["odown"],
    }
}
