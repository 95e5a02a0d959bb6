//! The one row writer: every value a source serves goes through here, at
//! the OID its object and its row's index give (as redis_exporter's
//! `registerConstMetric` is its one writer). A source says which row
//! ([`RowKey`]) and what each of its fields is worth; the catalogue says
//! which columns the table has, which field each one reads, where it sits
//! and how the row is indexed. No source builds an OID.

use super::*;

use crate::smi::Syntax;

use crate::oid::Oid;
use crate::smi::Value;

/// The field a column reads, as its [`Source`] names it: what a row type
/// gives a value for (`fn value(&self, field)`). Each kind of source has
/// its own field type, so a row writer sees only the columns its rows
/// can fill.
pub trait Column: Copy {
    /// The field of object `def`, or `None` for another kind of source.
    fn of(def: &ObjectDef) -> Option<Self>;
}

/// An INFO field as an object reads it: the names it may have (the first
/// present wins), how its text becomes a value, and the syntax it is
/// served as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InfoRead {
    pub fields: &'static [&'static str],
    pub conversion: Conversion,
    pub syntax: Syntax,
}

impl Column for InfoRead {
    fn of(def: &ObjectDef) -> Option<Self> {
        match def.source {
            Source::Info { fields, conversion } => Some(InfoRead {
                fields,
                conversion,
                syntax: def.syntax,
            }),
            _ => None,
        }
    }
}

/// `impl Column` for the field types of the sources that are not a
/// `table!`'s own (a `table!` makes its field type's).
macro_rules! column_fields {
    ($($field:ty => $($variant:ident)|+;)+) => {
        $(impl Column for $field {
            fn of(def: &ObjectDef) -> Option<Self> {
                match def.source {
                    $(Source::$variant(field))|+ => Some(field),
                    _ => None,
                }
            }
        })+
    };
}

column_fields! {
    StatusField => Status;
    RowsField => Rows;
    PuppetField => Puppet;
}

impl Column for PuppetCertificateField {
    fn of(def: &ObjectDef) -> Option<Self> {
        match def.source {
            Source::Puppet(PuppetField::Certificate(field)) => Some(field),
            _ => None,
        }
    }
}

impl Column for PuppetEventField {
    fn of(def: &ObjectDef) -> Option<Self> {
        match def.source {
            Source::Puppet(PuppetField::Events(field)) => Some(field),
            _ => None,
        }
    }
}

/// Where a source's values go: a part of the snapshot, sorted later.
pub type Cells = Vec<(Oid, Value)>;

/// Writes one row of `table`: for each column whose field is an `F`, the
/// value `value` gives it (none: the cell is absent), at the column's OID
/// and the row's index. Returns `false`, writing nothing, when `key` is no
/// row of the table's INDEX (a name no index can hold): the caller counts
/// it as left out.
pub fn write_row<F: Column>(
    table: &TableDef,
    key: RowKey<'_>,
    layout: &Layout,
    cells: &mut Cells,
    value: impl Fn(F) -> Option<Value>,
) -> bool {
    let Some(suffix) = table.index.suffix(key) else {
        return false;
    };
    write_cells(table.columns, &suffix, layout, cells, value);
    true
}

/// Writes the scalars (`.0`) among `objects` whose field is an `F`.
pub fn write_scalars<F: Column>(
    objects: &[ObjectDef],
    layout: &Layout,
    cells: &mut Cells,
    value: impl Fn(F) -> Option<Value>,
) {
    write_cells(objects, &[0], layout, cells, value);
}

fn write_cells<F: Column>(
    objects: &[ObjectDef],
    suffix: &[u32],
    layout: &Layout,
    cells: &mut Cells,
    value: impl Fn(F) -> Option<Value>,
) {
    for def in objects {
        let Some(field) = F::of(def) else {
            continue;
        };
        if let Some(v) = value(field) {
            // Roots are at most MAX_ROOT_SUBIDS long and suffixes at most
            // a two-name index, which fits (a catalogue test checks it).
            if let Some(oid) = layout.row_oid(def, suffix) {
                cells.push((oid, v));
            }
        }
    }
}

/// Writes the rows of `table` from `rows`, at most the table's
/// [`TableDef::max_rows`]; returns how many rows were left out (over the
/// cap, or keyed by a name no index can hold), for the source to serve as
/// a count an operator can see.
pub fn write_rows<R, F: Column>(
    table: &TableDef,
    rows: impl IntoIterator<Item = R>,
    layout: &Layout,
    cells: &mut Cells,
    key: impl Fn(&R) -> RowKey<'_>,
    value: impl Fn(&R, F) -> Option<Value>,
) -> u64 {
    let max = table.max_rows.unwrap_or(usize::MAX);
    let (mut written, mut left_out) = (0_usize, 0_u64);
    for row in rows {
        if written < max && write_row(table, key(&row), layout, cells, |f| value(&row, f)) {
            written += 1;
        } else {
            left_out += 1;
        }
    }
    left_out
}
