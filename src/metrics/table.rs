//! `table!`: a table declared once.

/// Declares one table of a module, once: its name, its entry and the
/// entry's arcs below the module root, how its rows are told apart (the
/// [`TableDef`]'s other fields; none for an entry that AUGMENTS
/// `redisInstanceEntry`), then one line per served column, each with its
/// own arc below the entry. It makes the `TableDef` and the columns'
/// [`ObjectDef`]s, every column's OID the entry's arcs and its own.
///
/// A table whose columns a source fills row by row names its field type
/// and the name the object reference shows its source by (`= enum
/// AclField as Acl { … }`): each column line is the field it reads,
/// `Field("mibName", arc, Syntax)` then the object's `.units(…)`,
/// `.enumerated(…)` or `.alias(…)`, and the macro makes the enum, its
/// [`Column`] and each column's [`Source::Column`]. Tables that share a
/// field type name it without `enum` (`= ClientField as ClientUser { … }`). A table
/// whose columns read other sources (INFO fields, the poller's status,
/// the Puppet agent's files) lists their constructors instead
/// (`= [info("mibName", arc, Gauge32, &["field"]), …]`).
macro_rules! table {
    (@arcs [$($arc:literal),+] $column:literal) => {
        &[$($arc,)+ $column]
    };
    (@table $(#[$tmeta:meta])* $table:ident ($name:literal, $entry:literal, $columns:ident) { $($head:tt)* }) => {
        $(#[$tmeta])*
        // A table with an INDEX of its own states every field; the base
        // fills an AUGMENTS table's.
        #[allow(clippy::needless_update)]
        pub const $table: TableDef = TableDef {
            table: $name,
            entry: $entry,
            columns: $columns,
            $($head)*
            ..TableDef::AUGMENTING
        };
    };
    (
        $(#[$tmeta:meta])*
        pub const $table:ident = ($name:literal, $entry:literal, $arcs:tt) { $($head:tt)* }
        $(#[$cmeta:meta])*
        pub const $columns:ident = enum $field:ident as $source:ident {
            $($(#[$vmeta:meta])* $variant:ident($object:literal, $arc:literal, $syntax:ident) $(.$with:ident($($arg:expr),*))*,)+
        }
    ) => {
        #[doc = concat!("The field a column of `", $name, "` reads: what a row gives a value for.")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $field {
            $($(#[$vmeta])* $variant,)+
        }

        impl Column for $field {
            fn of(def: &ObjectDef) -> Option<Self> {
                const ALL: &[$field] = &[$($field::$variant),+];
                match def.source {
                    Source::Column(cell) if cell.fields == stringify!($field) => {
                        ALL.get(usize::from(cell.field)).copied()
                    }
                    _ => None,
                }
            }
        }

        table! { pub const $table = ($name, $entry, $arcs) { $($head)* } $(#[$cmeta])* pub const $columns = $field as $source { $($variant($object, $arc, $syntax) $(.$with($($arg),*))*,)+ } }
    };
    (
        $(#[$tmeta:meta])*
        pub const $table:ident = ($name:literal, $entry:literal, $arcs:tt) { $($head:tt)* }
        $(#[$cmeta:meta])*
        pub const $columns:ident = $field:ident as $source:ident {
            $($(#[$vmeta:meta])* $variant:ident($object:literal, $arc:literal, $syntax:ident) $(.$with:ident($($arg:expr),*))*,)+
        }
    ) => {
        table!(@table $(#[$tmeta])* $table ($name, $entry, $columns) { $($head)* });

        $(#[$cmeta])*
        pub const $columns: &[ObjectDef] = &[$(
            column(
                $object,
                table!(@arcs $arcs $arc),
                Syntax::$syntax,
                Source::Column(Cell {
                    fields: stringify!($field),
                    field: $field::$variant as u8,
                    source: stringify!($source),
                    name: stringify!($variant),
                }),
            )$(.$with($($arg),*))*,
        )+];
    };
    (
        $(#[$tmeta:meta])*
        pub const $table:ident = ($name:literal, $entry:literal, $arcs:tt) { $($head:tt)* }
        $(#[$cmeta:meta])*
        pub const $columns:ident = [
            $($make:ident($object:literal, $arc:literal $(, $part:expr)*) $(.$with:ident($($arg:expr),*))*,)+
        ]
    ) => {
        table!(@table $(#[$tmeta])* $table ($name, $entry, $columns) { $($head)* });

        $(#[$cmeta])*
        pub const $columns: &[ObjectDef] = &[$(
            $make($object, table!(@arcs $arcs $arc) $(, $part)*)$(.$with($($arg),*))*,
        )+];
    };
}
