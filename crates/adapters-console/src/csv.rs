//! The CSV export of a filtered operations list, streamed: the header row, then one keyset
//! page of the search after another until the store has no more. UTF-8 without a byte order
//! mark, CRLF line ends, no totals row; cells as [`domain::console::csv_cell`] writes them.

use std::sync::Arc;

use actix_web::web::Bytes;
use domain::console::{csv_row, Cursor, OperationFilter, CSV_HEADER};
use domain::ports::{Chain, ConsoleStore, StoreError};
use futures::stream::{self, Stream};

/// Operations fetched per store call.
pub(crate) const EXPORT_PAGE: u32 = 500;

/// Where the export stands.
enum Step {
    Header,
    After(Option<Cursor>),
    Done,
}

/// The export's body: every operation matching `filter`, newest first, in pages of
/// [`EXPORT_PAGE`]. A store failure midway ends the stream with the error, so the download
/// breaks off instead of looking complete.
pub(crate) fn rows(
    store: Arc<dyn ConsoleStore>,
    filter: OperationFilter,
) -> impl Stream<Item = Result<Bytes, StoreError>> + 'static {
    stream::unfold(Step::Header, move |step| {
        let store = Arc::clone(&store);
        let filter = filter.clone();
        async move {
            match step {
                Step::Header => Some((
                    Ok(Bytes::from(format!("{CSV_HEADER}\r\n"))),
                    Step::After(None),
                )),
                Step::After(after) => {
                    match store
                        .search_operations(&filter, after.as_ref(), EXPORT_PAGE)
                        .await
                    {
                        Ok(page) if page.is_empty() => None,
                        Ok(page) => {
                            let next = match page.last() {
                                Some(last) if page.len() >= EXPORT_PAGE as usize => {
                                    Step::After(Some(Cursor {
                                        created_at: last.operation.created_at(),
                                        id: last.operation.id(),
                                    }))
                                }
                                _ => Step::Done,
                            };
                            let text: String = page.iter().map(csv_row).collect();
                            Some((Ok(Bytes::from(text)), next))
                        }
                        Err(error) => {
                            tracing::error!(error = %Chain(&error), "operations export broke off");
                            Some((Err(error), Step::Done))
                        }
                    }
                }
                Step::Done => None,
            }
        }
    })
}
