//! Statements assembled at run time (a filter's `AND` clauses, a batch's
//! `VALUES` rows), with each backend's placeholders.
//!
//! Why not sqlx's `QueryBuilder`: over the `Any` driver it writes `?` for
//! every bind, which Postgres does not accept. Postgres gets `$1`, `$2`, …
//! SQLite gets bare `?`: it reads `$N` too, but a named placeholder costs
//! every bind a scan of the statement's parameter names (sqlx asks each
//! parameter's name; SQLite looks it up in a list), which made a batch of
//! receipt facts quadratic in its size — the largest cost of the store's
//! query thread in issue 17's profile. A bare `?` has no name to look up.

use std::fmt::{Display, Write as _};

use sqlx::any::AnyArguments;
use sqlx::{Arguments as _, Encode, Type};

use crate::{Backend, Db, StoreError};

/// A statement's text and its arguments, built together so each
/// placeholder's number is its argument's position.
pub(crate) struct SqlBuilder {
    sql: String,
    args: AnyArguments,
    binds: usize,
    backend: Backend,
}

impl SqlBuilder {
    /// Starts a statement for `backend` with `sql` (which must hold no
    /// placeholder).
    pub(crate) fn new(sql: &str, backend: Backend) -> SqlBuilder {
        SqlBuilder {
            sql: sql.to_owned(),
            args: AnyArguments::default(),
            binds: 0,
            backend,
        }
    }

    /// Appends text (no placeholder in it: use [`bind`](Self::bind)).
    pub(crate) fn push(&mut self, text: impl Display) -> &mut SqlBuilder {
        // Writing into a String cannot fail.
        let _ = write!(self.sql, "{text}");
        self
    }

    /// Appends the next placeholder (`$N`, or `?` on SQLite) and its argument.
    pub(crate) fn bind<T>(&mut self, value: T) -> Result<&mut SqlBuilder, StoreError>
    where
        T: for<'q> Encode<'q, Db> + Type<Db>,
    {
        self.args
            .add(value)
            .map_err(|e| StoreError::InvalidInput(format!("cannot bind a value: {e}")))?;
        self.binds += 1;
        match self.backend {
            Backend::Sqlite => self.sql.push('?'),
            Backend::Postgres => {
                let _ = write!(self.sql, "${}", self.binds);
            }
        }
        Ok(self)
    }

    /// The statement, ready for `sqlx::query_with` and its kin.
    pub(crate) fn finish(self) -> (sqlx::AssertSqlSafe<String>, AnyArguments) {
        (sqlx::AssertSqlSafe(self.sql), self.args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three_binds(backend: Backend) -> (String, usize) {
        let mut q = SqlBuilder::new("SELECT idx FROM t WHERE 1 = 1", backend);
        q.push(" AND a = ").bind(1_i64).unwrap();
        q.push(" AND b = ").bind("x".to_owned()).unwrap();
        q.push(" LIMIT ").bind(3_i64).unwrap();
        let (sql, args) = q.finish();
        (sql.0, args.len())
    }

    #[test]
    fn postgres_placeholders_are_numbered_by_their_arguments_position() {
        assert_eq!(
            three_binds(Backend::Postgres),
            (
                "SELECT idx FROM t WHERE 1 = 1 AND a = $1 AND b = $2 LIMIT $3".to_owned(),
                3
            )
        );
    }

    /// Bare `?`s, taken in order: no name for SQLite to look up per bind.
    #[test]
    fn sqlite_placeholders_are_bare_and_in_order() {
        assert_eq!(
            three_binds(Backend::Sqlite),
            (
                "SELECT idx FROM t WHERE 1 = 1 AND a = ? AND b = ? LIMIT ?".to_owned(),
                3
            )
        );
    }
}
