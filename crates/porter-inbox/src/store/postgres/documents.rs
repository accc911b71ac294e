//! The Document store on PostgreSQL: the same [`Documents`] answers as the
//! FTS5 store, from PostgreSQL's own full-text search. Each document's
//! title (weight A) and Markdown (weight B) are one generated `tsvector`
//! column under a GIN index, in the `simple` configuration (lower-cased
//! words, no stemming and no stop words, as FTS5's `unicode61` tokenizer
//! reads them); hits are ranked by `ts_rank` and excerpted by
//! `ts_headline`.
//!
//! Search text reaches PostgreSQL only as bound parameters: a word or a
//! phrase through `phraseto_tsquery`, which reads plain text, and a `word*`
//! prefix as a `to_tsquery` text this module writes with every lexeme
//! quoted, so no input can make a syntax error.

use super::{Cached as _, INDEXED_CHARS, PostgresRecords, connect};
use crate::documents::{
    DOCUMENT_COLUMNS, Document, DocumentSummary, Documents, Hit, MARK_CLOSE, MARK_OPEN,
    SNIPPET_TOKENS, SearchQuery, document_from, hit_from_excerpt, summary_from,
};
use crate::model::InboxError;
use crate::store::as_i64;

/// A `to_tsquery` text for a `word*` prefix: the stem's runs of letters and
/// digits, each a quoted lexeme, in sequence (`<->`), the last one a
/// prefix (`:*`). `None` when the stem has no letter or digit.
fn prefix_query(stem: &str) -> Option<String> {
    let lexemes: Vec<String> = stem
        .split(|c: char| !c.is_alphanumeric())
        .filter(|run| !run.is_empty())
        .map(|run| format!("'{}'", run.replace('\\', "\\\\").replace('\'', "''")))
        .collect();
    (!lexemes.is_empty()).then(|| lexemes.join(" <-> ") + ":*")
}

/// The SQL expression of the whole query over parameters `$first…`, and
/// the parameters' values: every term must match.
fn tsquery(query: &SearchQuery, first: usize) -> (String, Vec<String>) {
    let mut parts = Vec::new();
    let mut values = Vec::new();
    for (term, prefix) in query.terms_with_prefix() {
        let n = first + values.len();
        if prefix {
            if let Some(text) = prefix_query(term) {
                parts.push(format!("to_tsquery('simple'::regconfig, ${n})"));
                values.push(text);
            }
        } else {
            parts.push(format!("phraseto_tsquery('simple'::regconfig, ${n})"));
            values.push(term.to_owned());
        }
    }
    if parts.is_empty() {
        // Only prefixes without letters: nothing can match.
        return ("''::tsquery".to_owned(), values);
    }
    (parts.join(" && "), values)
}

impl Documents for PostgresRecords {
    fn add(&self, document: &Document) -> Result<(), InboxError> {
        let document = document.storable();
        self.call("store a document", |pool| async move {
            connect(&pool)
                .await?
                .cached_execute(
                    &format!(
                        "INSERT INTO porter_documents ({DOCUMENT_COLUMNS})
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
                    ),
                    &[
                        &document.id,
                        &document.title,
                        &document.markdown,
                        &document.source_path,
                        &document.source_sha256,
                        &document.origin,
                        &document.call,
                        &document.run.to_string(),
                        &document.owner.key_name,
                        &document.owner.tenant,
                        &document.created_at,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn get(&self, tenant: &str, id: &str) -> Result<Option<Document>, InboxError> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.call("read a document", |pool| async move {
            let row = connect(&pool)
                .await?
                .cached_opt(
                    &format!(
                        "SELECT {DOCUMENT_COLUMNS} FROM porter_documents WHERE id = $1 AND tenant = $2"
                    ),
                    &[&id, &tenant],
                )
                .await?;
            row.as_ref().map(document_from).transpose()
        })
    }

    fn list(
        &self,
        tenant: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<DocumentSummary>, InboxError> {
        let tenant = tenant.to_owned();
        let (limit, offset) = (as_i64(limit), as_i64(offset));
        self.call("list documents", move |pool| async move {
            connect(&pool)
                .await?
                .cached_query(
                    "SELECT id, title, source_path, origin, octet_length(markdown)::BIGINT, created_at
                     FROM porter_documents WHERE tenant = $1 ORDER BY created_at DESC, seq DESC
                     LIMIT $2 OFFSET $3",
                    &[&tenant, &limit, &offset],
                )
                .await?
                .iter()
                .map(summary_from)
                .collect()
        })
    }

    fn search(
        &self,
        tenant: &str,
        query: &SearchQuery,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<Hit>, InboxError> {
        let (expression, values) = tsquery(query, 5);
        let sql = format!(
            "WITH q AS (SELECT {expression} AS query)
             SELECT d.id, d.title, d.markdown,
                    ts_headline('simple'::regconfig, left(d.markdown, {INDEXED_CHARS}), q.query, $4),
                    (-ts_rank(d.search, q.query))::float8 AS rank
             FROM porter_documents d, q
             WHERE d.search @@ q.query AND d.tenant = $1
             ORDER BY rank, d.seq DESC LIMIT $2 OFFSET $3"
        );
        // One excerpt of about SNIPPET_TOKENS words around the best match,
        // its matches between the marks `hit_from_excerpt` reads.
        let options = format!(
            "StartSel={MARK_OPEN}, StopSel={MARK_CLOSE}, MaxWords={SNIPPET_TOKENS}, MinWords={}, \
             ShortWord=0, MaxFragments=1",
            SNIPPET_TOKENS / 2
        );
        let tenant = tenant.to_owned();
        let (limit, offset) = (as_i64(limit), as_i64(offset));
        let query = query.clone();
        self.call("search documents", move |pool| async move {
            let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                vec![&tenant, &limit, &offset, &options];
            for value in &values {
                params.push(value);
            }
            let rows = connect(&pool).await?.query(&sql, &params).await?;
            rows.iter()
                .map(|row| {
                    let markdown: String = row.try_get(2)?;
                    let excerpt: String = row.try_get(3)?;
                    Ok(hit_from_excerpt(
                        row.try_get(0)?,
                        row.try_get(1)?,
                        &markdown,
                        &excerpt,
                        &query,
                        row.try_get(4)?,
                    ))
                })
                .collect()
        })
    }

    fn delete(&self, tenant: &str, id: &str) -> Result<bool, InboxError> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.call("delete a document", |pool| async move {
            let removed = connect(&pool)
                .await?
                .cached_execute(
                    "DELETE FROM porter_documents WHERE id = $1 AND tenant = $2",
                    &[&id, &tenant],
                )
                .await?;
            Ok(removed > 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_query;
    use crate::store::postgres::{DOCUMENTS_MIGRATION as MIGRATION, INDEXED_CHARS};

    #[test]
    fn the_index_covers_the_characters_the_search_excerpts() {
        assert!(MIGRATION.contains(&format!("left(markdown, {INDEXED_CHARS})")));
    }

    #[test]
    fn a_prefix_becomes_quoted_lexemes_whatever_it_holds() {
        assert_eq!(prefix_query("rev").as_deref(), Some("'rev':*"));
        assert_eq!(
            prefix_query("o'brien").as_deref(),
            Some("'o' <-> 'brien':*")
        );
        assert_eq!(prefix_query("a\\b").as_deref(), Some("'a' <-> 'b':*"));
        assert_eq!(prefix_query("--"), None);
    }
}
