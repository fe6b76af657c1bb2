//! Statements assembled at run time (a filter's `AND` clauses, a batch's
//! `VALUES` rows), with numbered placeholders.
//!
//! Why not sqlx's `QueryBuilder`: over the `Any` driver it writes `?` for
//! every bind, which Postgres does not accept. Every statement of this crate
//! uses `$1`, `$2`, …, which both backends read (SQLite takes `$N` as the
//! N-th argument), so one text serves SQLite and Postgres.

use std::fmt::{Display, Write as _};

use sqlx::any::AnyArguments;
use sqlx::{Arguments as _, Encode, Type};

use crate::{Db, StoreError};

/// A statement's text and its arguments, built together so each
/// placeholder's number is its argument's position.
pub(crate) struct SqlBuilder {
    sql: String,
    args: AnyArguments,
    binds: usize,
}

impl SqlBuilder {
    /// Starts a statement with `sql` (which must hold no placeholder).
    pub(crate) fn new(sql: &str) -> SqlBuilder {
        SqlBuilder {
            sql: sql.to_owned(),
            args: AnyArguments::default(),
            binds: 0,
        }
    }

    /// Appends text (no placeholder in it: use [`bind`](Self::bind)).
    pub(crate) fn push(&mut self, text: impl Display) -> &mut SqlBuilder {
        // Writing into a String cannot fail.
        let _ = write!(self.sql, "{text}");
        self
    }

    /// Appends the next placeholder (`$N`) and its argument.
    pub(crate) fn bind<T>(&mut self, value: T) -> Result<&mut SqlBuilder, StoreError>
    where
        T: for<'q> Encode<'q, Db> + Type<Db>,
    {
        self.args
            .add(value)
            .map_err(|e| StoreError::InvalidInput(format!("cannot bind a value: {e}")))?;
        self.binds += 1;
        let _ = write!(self.sql, "${}", self.binds);
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

    #[test]
    fn placeholders_are_numbered_by_their_arguments_position() {
        let mut q = SqlBuilder::new("SELECT idx FROM t WHERE 1 = 1");
        q.push(" AND a = ").bind(1_i64).unwrap();
        q.push(" AND b = ").bind("x".to_owned()).unwrap();
        q.push(" LIMIT ").bind(3_i64).unwrap();
        let (sql, args) = q.finish();
        assert_eq!(
            sql.0,
            "SELECT idx FROM t WHERE 1 = 1 AND a = $1 AND b = $2 LIMIT $3"
        );
        assert_eq!(args.len(), 3);
    }
}
