//! Bind parameters written comma-separated into a statement built by hand (`$1, $2, $3`):
//! the column values of an `INSERT ... SELECT`, the arrays of an `unnest(...)`.

use diesel::backend::Backend;
use diesel::query_builder::AstPass;
use diesel::serialize::ToSql;
use diesel::sql_types::HasSqlType;
use diesel::QueryResult;

/// A list of bind parameters (and SQL items among them) written into `out`, each after
/// `", "` but for the first of a [`Binds::new`] list.
pub(crate) struct Binds<'p, 'a, 'b, DB: Backend> {
    out: &'p mut AstPass<'a, 'b, DB>,
    first: bool,
}

impl<'p, 'a, 'b, DB: Backend> Binds<'p, 'a, 'b, DB> {
    /// A list whose first item is written without a comma before it.
    pub(crate) fn new(out: &'p mut AstPass<'a, 'b, DB>) -> Self {
        Self { out, first: true }
    }

    /// A list that goes on an earlier one: its first item too is written after `", "`.
    pub(crate) fn after(out: &'p mut AstPass<'a, 'b, DB>) -> Self {
        Self { out, first: false }
    }

    /// Writes `value` as a bind parameter of SQL type `T`.
    pub(crate) fn bind<T, U>(&mut self, value: &'b U) -> QueryResult<&mut Self>
    where
        DB: HasSqlType<T>,
        U: ToSql<T, DB> + ?Sized,
    {
        self.comma();
        self.out.push_bind_param::<T, U>(value)?;
        Ok(self)
    }

    /// Writes `sql` as an item of the list (a constant or an expression, not a parameter).
    pub(crate) fn sql(&mut self, sql: &str) -> &mut Self {
        self.comma();
        self.out.push_sql(sql);
        self
    }

    /// The `", "` before every item but a new list's first.
    fn comma(&mut self) {
        if !self.first {
            self.out.push_sql(", ");
        }
        self.first = false;
    }
}
